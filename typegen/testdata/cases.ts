type CasesEmptyObjectInput = unknown;

type CasesEmptyObjectOutput = unknown;

type CasesTrueInput = unknown;

type CasesTrueOutput = unknown;

type CasesFalseInput = never;

type CasesFalseOutput = never;

type CasesNoBytesInput = { [key: string]: unknown };

type CasesInvalidJSONInput = { [key: string]: unknown };

type CasesTrailingDataInput = { [key: string]: unknown };

type CasesNotASchemaInput = unknown;

type CasesNotASchemaOutput = unknown;

type CasesNullInput = { [key: string]: unknown };

type CasesUnknownTypeNameInput = unknown;

type CasesUnknownTypeNameOutput = unknown;

type CasesDraft3AnyInput = unknown;

type CasesDraft3AnyOutput = unknown;

type CasesStringInput = string;

type CasesStringOutput = string;

type CasesNumberInput = number;

type CasesNumberOutput = number;

type CasesIntegerInput = number;

type CasesIntegerOutput = number;

type CasesBooleanInput = boolean;

type CasesBooleanOutput = boolean;

type CasesNullTypeInput = null;

type CasesNullTypeOutput = null;

type CasesTypeArrayInput = string | null;

type CasesTypeArrayOutput = string | null;

type CasesTypeArrayDedupInput = number;

type CasesTypeArrayDedupOutput = number;

type CasesTypeArrayWithObjectInput = { a: string } | null;

type CasesTypeArrayWithObjectOutput = { a: string } | null;

type CasesEmptyTypeArrayInput = unknown;

type CasesEmptyTypeArrayOutput = unknown;

type CasesEnumStringsInput = "a" | "b\"c" | "</script>" | "*/" | "\u2028";

type CasesEnumStringsOutput = "a" | "b\"c" | "</script>" | "*/" | "\u2028";

type CasesEnumMixedInput = 1 | -2.5 | 1e3 | true | false | null | "x";

type CasesEnumMixedOutput = 1 | -2.5 | 1e3 | true | false | null | "x";

type CasesEnumDuplicatesInput = "a";

type CasesEnumDuplicatesOutput = "a";

type CasesEnumEmptyInput = never;

type CasesEnumEmptyOutput = never;

type CasesEnumObjectAndArrayInput = { a: "x"; "b-c": [1] } | [];

type CasesEnumObjectAndArrayOutput = { a: "x"; "b-c": [1] } | [];

type CasesEnumNotAListInput = string;

type CasesEnumNotAListOutput = string;

type CasesConstStringInput = "fixed";

type CasesConstStringOutput = "fixed";

type CasesConstWinsOverTypeInput = "v1";

type CasesConstWinsOverTypeOutput = "v1";

type CasesConstNullInput = null;

type CasesConstNullOutput = null;

type CasesConstEmptyObjectInput = {};

type CasesConstEmptyObjectOutput = {};

type CasesAnyOfInput = string | number;

type CasesAnyOfOutput = string | number;

type CasesOneOfInput = boolean | null;

type CasesOneOfOutput = boolean | null;

type CasesAnyOfWithUnknownMemberInput = unknown;

type CasesAnyOfWithUnknownMemberOutput = unknown;

type CasesAnyOfWithNeverMemberInput = string;

type CasesAnyOfWithNeverMemberOutput = string;

type CasesAnyOfConstrainingATypeInput = string;

type CasesAnyOfConstrainingATypeOutput = string;

type CasesAllOfInput = { a: string } & { b?: number };

type CasesAllOfOutput = { a: string } & { b?: number };

type CasesAllOfOfUnionInput = (string | number) & string;

type CasesAllOfOfUnionOutput = (string | number) & string;

type CasesAllOfWithFalseInput = never;

type CasesAllOfWithFalseOutput = never;

type CasesUnionOfIntersectionsInput = (string & "a") | number;

type CasesUnionOfIntersectionsOutput = (string & "a") | number;

/** @default null */
type CasesPydanticOptionalInput = string | null;

/** @default null */
type CasesPydanticOptionalOutput = string | null;

type CasesNullableInput = string | null;

type CasesNullableOutput = string | null;

type CasesNullableFalseInput = string;

type CasesNullableFalseOutput = string;

type CasesXNullableInput = number | null;

type CasesXNullableOutput = number | null;

type CasesNullableEnumInput = "a" | null;

type CasesNullableEnumOutput = "a" | null;

type CasesArrayOfStringsInput = string[];

type CasesArrayOfStringsOutput = string[];

type CasesArrayWithoutItemsInput = unknown[];

type CasesArrayWithoutItemsOutput = unknown[];

type CasesArrayOfUnionInput = (string | number)[];

type CasesArrayOfUnionOutput = (string | number)[];

type CasesNestedArraysInput = boolean[][];

type CasesNestedArraysOutput = boolean[][];

type CasesItemsFalseInput = [];

type CasesItemsFalseOutput = [];

type CasesItemsInferredInput = number[];

type CasesItemsInferredOutput = number[];

type CasesPrefixItemsClosedInput = [string, number];

type CasesPrefixItemsClosedOutput = [string, number];

type CasesPrefixItemsRestInput = [string, ...number[]];

type CasesPrefixItemsRestOutput = [string, ...number[]];

type CasesPrefixItemsOpenInput = [string, ...unknown[]];

type CasesPrefixItemsOpenOutput = [string, ...unknown[]];

type CasesDraft4TupleInput = [string, number];

type CasesDraft4TupleOutput = [string, number];

type CasesDraft4TupleRestInput = [string, ...(string | null)[]];

type CasesDraft4TupleRestOutput = [string, ...(string | null)[]];

type CasesObjectInput = { [key: string]: unknown };

type CasesObjectOutput = { [key: string]: unknown };

type CasesRequiredAndOptionalInput = { a: string; b?: number };

type CasesRequiredAndOptionalOutput = { a: string; b?: number };

type CasesRequiredWithoutPropertyInput = { id: unknown };

type CasesRequiredWithoutPropertyOutput = { id: unknown };

type CasesObjectInferredFromPropertiesInput = { x?: number };

type CasesObjectInferredFromPropertiesOutput = { x?: number };

type CasesDraft3RequiredInput = { a: string };

type CasesDraft3RequiredOutput = { a: string };

type CasesQuotedKeysInput = {
  ""?: string;
  "1st"?: string;
  "a b"?: string;
  "foo-bar": string;
  "naïve"?: string;
  ok_$1?: string;
};

type CasesQuotedKeysOutput = {
  ""?: string;
  "1st"?: string;
  "a b"?: string;
  "foo-bar": string;
  "naïve"?: string;
  ok_$1?: string;
};

type CasesReservedKeysQuotedInput = { "class": number; "default"?: string };

type CasesReservedKeysQuotedOutput = { "class": number; "default"?: string };

type CasesQuoteInKeyInput = { "say \"hi\"": string };

type CasesQuoteInKeyOutput = { "say \"hi\"": string };

type CasesAdditionalPropertiesTrueInput = { [key: string]: unknown };

type CasesAdditionalPropertiesTrueOutput = { [key: string]: unknown };

type CasesAdditionalPropertiesSchemaInput = { [key: string]: number };

type CasesAdditionalPropertiesSchemaOutput = { [key: string]: number };

type CasesAdditionalPropertiesFalseInput = { [key: string]: never };

type CasesAdditionalPropertiesFalseOutput = { [key: string]: never };

type CasesAdditionalPropertiesFalseWithPropertiesInput = { a: string };

type CasesAdditionalPropertiesFalseWithPropertiesOutput = { a: string };

type CasesIndexWidenedForPropertiesInput = { a: string; [key: string]: number | string };

type CasesIndexWidenedForPropertiesOutput = { a: string; [key: string]: number | string };

type CasesIndexWidenedForOptionalInput = { a?: number; [key: string]: number | undefined };

type CasesIndexWidenedForOptionalOutput = { a?: number; [key: string]: number | undefined };

type CasesIndexUnknownWithPropertiesInput = { a?: number; [key: string]: unknown };

type CasesIndexUnknownWithPropertiesOutput = { a?: number; [key: string]: unknown };

type CasesIndexUnknownForObjectPropertiesInput = { p?: { x?: number }; [key: string]: unknown };

type CasesIndexUnknownForObjectPropertiesOutput = { p?: { x?: number }; [key: string]: unknown };

type CasesPatternPropertiesInput = { [key: string]: number | string };

type CasesPatternPropertiesOutput = { [key: string]: number | string };

type CasesNestedObjectInput = { p: { x: number } };

type CasesNestedObjectOutput = { p: { x: number } };

type CasesLongObjectBreaksLinesInput = {
  alpha_value?: string;
  beta_value?: string;
  delta?: number;
  gamma_value?: string;
};

type CasesLongObjectBreaksLinesOutput = {
  alpha_value?: string;
  beta_value?: string;
  delta?: number;
  gamma_value?: string;
};

type CasesObjectInUnionStaysMultiLineInput = {
  /** A. */
  a?: string;
} | null;

type CasesObjectInUnionStaysMultiLineOutput = {
  /** A. */
  a?: string;
} | null;

type CasesDescriptionInput = {
  /** The A. */
  a?: string;
};

type CasesDescriptionOutput = {
  /** The A. */
  a?: string;
};

type CasesDescriptionEscapedInput = {
  /** ends *\/ here */
  a?: string;
};

type CasesDescriptionEscapedOutput = {
  /** ends *\/ here */
  a?: string;
};

type CasesMultiLineDescriptionInput = {
  /**
   * First line.
   *
   * Second
   * third .
   */
  a?: string;
};

type CasesMultiLineDescriptionOutput = {
  /**
   * First line.
   *
   * Second
   * third .
   */
  a?: string;
};

type CasesDocTagsInput = {
  /**
   * @format date-time
   * @default "now *\/"
   * @example "2024-01-01T00:00:00Z"
   * @example {"a":1}
   * @example 1
   * @deprecated
   */
  when: string;
};

type CasesDocTagsOutput = {
  /**
   * @format date-time
   * @default "now *\/"
   * @example "2024-01-01T00:00:00Z"
   * @example {"a":1}
   * @example 1
   * @deprecated
   */
  when: string;
};

type CasesOpenAPIExampleInput = {
  /** @example 5 */
  n?: number;
};

type CasesOpenAPIExampleOutput = {
  /** @example 5 */
  n?: number;
};

type CasesLongDefaultTruncatedInput = {
  /** @default "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… */
  s?: string;
};

type CasesLongDefaultTruncatedOutput = {
  /** @default "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… */
  s?: string;
};

type CasesTitleIsNotDocumentationInput = { a?: string };

type CasesTitleIsNotDocumentationOutput = { a?: string };

type CasesRefDefsInput = CasesPos;

type CasesRefDefsOutput = CasesPos;

type CasesPos = number;

type CasesRefDefinitionsInput = { n?: CasesName };

type CasesRefDefinitionsOutput = { n?: CasesName };

type CasesName = string;

type CasesRefComponentsInput = CasesId[];

type CasesRefComponentsOutput = CasesId[];

type CasesId = number;

type CasesRefWithNullableSiblingInput = CasesA | null;

type CasesRefWithNullableSiblingOutput = CasesA | null;

type CasesA = string;

type CasesRefWithConstraintsInput = CasesA2 & { a: unknown };

type CasesRefWithConstraintsOutput = CasesA2 & { a: unknown };

type CasesA2 = { a?: string };

type CasesRefEscapedPointerInput = CasesA1b | CasesC0d;

type CasesRefEscapedPointerOutput = CasesA1b | CasesC0d;

type CasesA1b = string;

type CasesC0d = number;

type CasesRefPercentEncodedInput = CasesAB;

type CasesRefPercentEncodedOutput = CasesAB;

type CasesAB = boolean;

type CasesRefIntoArrayInput = string | Cases0;

type CasesRefIntoArrayOutput = string | Cases02;

type Cases0 = string;

type Cases02 = string;

type CasesRefBadArrayIndexInput = unknown;

type CasesRefBadArrayIndexOutput = unknown;

type CasesRefUnresolvableInput = unknown;

type CasesRefUnresolvableOutput = unknown;

type CasesRefRemoteInput = unknown;

type CasesRefRemoteOutput = unknown;

type CasesRefNotAStringInput = string;

type CasesRefNotAStringOutput = string;

type CasesRefRecursiveInput = { children?: CasesRefRecursiveInput[]; name: string };

type CasesRefRecursiveOutput = { children?: CasesRefRecursiveOutput[]; name: string };

type CasesRefMutuallyRecursiveInput = CasesA3;

type CasesRefMutuallyRecursiveOutput = CasesA3;

type CasesA3 = { b?: CasesB };

type CasesB = CasesA3[];

type CasesRefSelfAliasInput = CasesA4;

type CasesRefSelfAliasOutput = CasesA4;

type CasesA4 = unknown;

declare const cases: {
  empty_object(input: CasesEmptyObjectInput): Promise<CasesEmptyObjectOutput | unknown>;
  "true"(input: CasesTrueInput): Promise<CasesTrueOutput | unknown>;
  "false"(input: CasesFalseInput): Promise<CasesFalseOutput | unknown>;
  no_bytes(input: CasesNoBytesInput): Promise<unknown>;
  invalid_JSON(input: CasesInvalidJSONInput): Promise<unknown>;
  trailing_data(input: CasesTrailingDataInput): Promise<unknown>;
  not_a_schema(input: CasesNotASchemaInput): Promise<CasesNotASchemaOutput | unknown>;
  "null"(input: CasesNullInput): Promise<unknown>;
  unknown_type_name(input: CasesUnknownTypeNameInput): Promise<CasesUnknownTypeNameOutput | unknown>;
  draft_3_any(input: CasesDraft3AnyInput): Promise<CasesDraft3AnyOutput | unknown>;
  string(input: CasesStringInput): Promise<CasesStringOutput | unknown>;
  number(input: CasesNumberInput): Promise<CasesNumberOutput | unknown>;
  integer(input: CasesIntegerInput): Promise<CasesIntegerOutput | unknown>;
  boolean(input: CasesBooleanInput): Promise<CasesBooleanOutput | unknown>;
  null_type(input: CasesNullTypeInput): Promise<CasesNullTypeOutput | unknown>;
  type_array(input: CasesTypeArrayInput): Promise<CasesTypeArrayOutput | unknown>;
  type_array_dedup(input: CasesTypeArrayDedupInput): Promise<CasesTypeArrayDedupOutput | unknown>;
  type_array_with_object(input: CasesTypeArrayWithObjectInput): Promise<CasesTypeArrayWithObjectOutput | unknown>;
  empty_type_array(input: CasesEmptyTypeArrayInput): Promise<CasesEmptyTypeArrayOutput | unknown>;
  enum_strings(input: CasesEnumStringsInput): Promise<CasesEnumStringsOutput | unknown>;
  enum_mixed(input: CasesEnumMixedInput): Promise<CasesEnumMixedOutput | unknown>;
  enum_duplicates(input: CasesEnumDuplicatesInput): Promise<CasesEnumDuplicatesOutput | unknown>;
  enum_empty(input: CasesEnumEmptyInput): Promise<CasesEnumEmptyOutput | unknown>;
  enum_object_and_array(input: CasesEnumObjectAndArrayInput): Promise<CasesEnumObjectAndArrayOutput | unknown>;
  enum_not_a_list(input: CasesEnumNotAListInput): Promise<CasesEnumNotAListOutput | unknown>;
  const_string(input: CasesConstStringInput): Promise<CasesConstStringOutput | unknown>;
  const_wins_over_type(input: CasesConstWinsOverTypeInput): Promise<CasesConstWinsOverTypeOutput | unknown>;
  const_null(input: CasesConstNullInput): Promise<CasesConstNullOutput | unknown>;
  const_empty_object(input: CasesConstEmptyObjectInput): Promise<CasesConstEmptyObjectOutput | unknown>;
  anyOf(input: CasesAnyOfInput): Promise<CasesAnyOfOutput | unknown>;
  oneOf(input: CasesOneOfInput): Promise<CasesOneOfOutput | unknown>;
  anyOf_with_unknown_member(input: CasesAnyOfWithUnknownMemberInput): Promise<CasesAnyOfWithUnknownMemberOutput | unknown>;
  anyOf_with_never_member(input: CasesAnyOfWithNeverMemberInput): Promise<CasesAnyOfWithNeverMemberOutput | unknown>;
  anyOf_constraining_a_type(input: CasesAnyOfConstrainingATypeInput): Promise<CasesAnyOfConstrainingATypeOutput | unknown>;
  allOf(input: CasesAllOfInput): Promise<CasesAllOfOutput | unknown>;
  allOf_of_union(input: CasesAllOfOfUnionInput): Promise<CasesAllOfOfUnionOutput | unknown>;
  allOf_with_false(input: CasesAllOfWithFalseInput): Promise<CasesAllOfWithFalseOutput | unknown>;
  union_of_intersections(input: CasesUnionOfIntersectionsInput): Promise<CasesUnionOfIntersectionsOutput | unknown>;
  pydantic_optional(input: CasesPydanticOptionalInput): Promise<CasesPydanticOptionalOutput | unknown>;
  nullable(input: CasesNullableInput): Promise<CasesNullableOutput | unknown>;
  nullable_false(input: CasesNullableFalseInput): Promise<CasesNullableFalseOutput | unknown>;
  x_nullable(input: CasesXNullableInput): Promise<CasesXNullableOutput | unknown>;
  nullable_enum(input: CasesNullableEnumInput): Promise<CasesNullableEnumOutput | unknown>;
  array_of_strings(input: CasesArrayOfStringsInput): Promise<CasesArrayOfStringsOutput | unknown>;
  array_without_items(input: CasesArrayWithoutItemsInput): Promise<CasesArrayWithoutItemsOutput | unknown>;
  array_of_union(input: CasesArrayOfUnionInput): Promise<CasesArrayOfUnionOutput | unknown>;
  nested_arrays(input: CasesNestedArraysInput): Promise<CasesNestedArraysOutput | unknown>;
  items_false(input: CasesItemsFalseInput): Promise<CasesItemsFalseOutput | unknown>;
  items_inferred(input: CasesItemsInferredInput): Promise<CasesItemsInferredOutput | unknown>;
  prefixItems_closed(input: CasesPrefixItemsClosedInput): Promise<CasesPrefixItemsClosedOutput | unknown>;
  prefixItems_rest(input: CasesPrefixItemsRestInput): Promise<CasesPrefixItemsRestOutput | unknown>;
  prefixItems_open(input: CasesPrefixItemsOpenInput): Promise<CasesPrefixItemsOpenOutput | unknown>;
  draft_4_tuple(input: CasesDraft4TupleInput): Promise<CasesDraft4TupleOutput | unknown>;
  draft_4_tuple_rest(input: CasesDraft4TupleRestInput): Promise<CasesDraft4TupleRestOutput | unknown>;
  object(input: CasesObjectInput): Promise<CasesObjectOutput | unknown>;
  required_and_optional(input: CasesRequiredAndOptionalInput): Promise<CasesRequiredAndOptionalOutput | unknown>;
  required_without_property(input: CasesRequiredWithoutPropertyInput): Promise<CasesRequiredWithoutPropertyOutput | unknown>;
  object_inferred_from_properties(input: CasesObjectInferredFromPropertiesInput): Promise<CasesObjectInferredFromPropertiesOutput | unknown>;
  draft_3_required(input: CasesDraft3RequiredInput): Promise<CasesDraft3RequiredOutput | unknown>;
  quoted_keys(input: CasesQuotedKeysInput): Promise<CasesQuotedKeysOutput | unknown>;
  reserved_keys_quoted(input: CasesReservedKeysQuotedInput): Promise<CasesReservedKeysQuotedOutput | unknown>;
  quote_in_key(input: CasesQuoteInKeyInput): Promise<CasesQuoteInKeyOutput | unknown>;
  additionalProperties_true(input: CasesAdditionalPropertiesTrueInput): Promise<CasesAdditionalPropertiesTrueOutput | unknown>;
  additionalProperties_schema(input: CasesAdditionalPropertiesSchemaInput): Promise<CasesAdditionalPropertiesSchemaOutput | unknown>;
  additionalProperties_false(input: CasesAdditionalPropertiesFalseInput): Promise<CasesAdditionalPropertiesFalseOutput | unknown>;
  additionalProperties_false_with_properties(input: CasesAdditionalPropertiesFalseWithPropertiesInput): Promise<CasesAdditionalPropertiesFalseWithPropertiesOutput | unknown>;
  index_widened_for_properties(input: CasesIndexWidenedForPropertiesInput): Promise<CasesIndexWidenedForPropertiesOutput | unknown>;
  index_widened_for_optional(input: CasesIndexWidenedForOptionalInput): Promise<CasesIndexWidenedForOptionalOutput | unknown>;
  index_unknown_with_properties(input: CasesIndexUnknownWithPropertiesInput): Promise<CasesIndexUnknownWithPropertiesOutput | unknown>;
  index_unknown_for_object_properties(input: CasesIndexUnknownForObjectPropertiesInput): Promise<CasesIndexUnknownForObjectPropertiesOutput | unknown>;
  patternProperties(input: CasesPatternPropertiesInput): Promise<CasesPatternPropertiesOutput | unknown>;
  nested_object(input: CasesNestedObjectInput): Promise<CasesNestedObjectOutput | unknown>;
  long_object_breaks_lines(input: CasesLongObjectBreaksLinesInput): Promise<CasesLongObjectBreaksLinesOutput | unknown>;
  object_in_union_stays_multi_line(input: CasesObjectInUnionStaysMultiLineInput): Promise<CasesObjectInUnionStaysMultiLineOutput | unknown>;
  description(input: CasesDescriptionInput): Promise<CasesDescriptionOutput | unknown>;
  description_escaped(input: CasesDescriptionEscapedInput): Promise<CasesDescriptionEscapedOutput | unknown>;
  multi_line_description(input: CasesMultiLineDescriptionInput): Promise<CasesMultiLineDescriptionOutput | unknown>;
  doc_tags(input: CasesDocTagsInput): Promise<CasesDocTagsOutput | unknown>;
  OpenAPI_example(input: CasesOpenAPIExampleInput): Promise<CasesOpenAPIExampleOutput | unknown>;
  long_default_truncated(input: CasesLongDefaultTruncatedInput): Promise<CasesLongDefaultTruncatedOutput | unknown>;
  title_is_not_documentation(input: CasesTitleIsNotDocumentationInput): Promise<CasesTitleIsNotDocumentationOutput | unknown>;
  ref_$defs(input: CasesRefDefsInput): Promise<CasesRefDefsOutput | unknown>;
  ref_definitions(input: CasesRefDefinitionsInput): Promise<CasesRefDefinitionsOutput | unknown>;
  ref_components(input: CasesRefComponentsInput): Promise<CasesRefComponentsOutput | unknown>;
  ref_with_nullable_sibling(input: CasesRefWithNullableSiblingInput): Promise<CasesRefWithNullableSiblingOutput | unknown>;
  ref_with_constraints(input: CasesRefWithConstraintsInput): Promise<CasesRefWithConstraintsOutput | unknown>;
  ref_escaped_pointer(input: CasesRefEscapedPointerInput): Promise<CasesRefEscapedPointerOutput | unknown>;
  ref_percent_encoded(input: CasesRefPercentEncodedInput): Promise<CasesRefPercentEncodedOutput | unknown>;
  ref_into_array(input: CasesRefIntoArrayInput): Promise<CasesRefIntoArrayOutput | unknown>;
  ref_bad_array_index(input: CasesRefBadArrayIndexInput): Promise<CasesRefBadArrayIndexOutput | unknown>;
  ref_unresolvable(input: CasesRefUnresolvableInput): Promise<CasesRefUnresolvableOutput | unknown>;
  ref_remote(input: CasesRefRemoteInput): Promise<CasesRefRemoteOutput | unknown>;
  ref_not_a_string(input: CasesRefNotAStringInput): Promise<CasesRefNotAStringOutput | unknown>;
  ref_recursive(input: CasesRefRecursiveInput): Promise<CasesRefRecursiveOutput | unknown>;
  ref_mutually_recursive(input: CasesRefMutuallyRecursiveInput): Promise<CasesRefMutuallyRecursiveOutput | unknown>;
  ref_self_alias(input: CasesRefSelfAliasInput): Promise<CasesRefSelfAliasOutput | unknown>;
};
