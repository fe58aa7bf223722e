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

type CasesRefEscapedPointerInput = CasesAB | CasesCD;

type CasesRefEscapedPointerOutput = CasesAB | CasesCD;

type CasesAB = string;

type CasesCD = number;

type CasesRefPercentEncodedInput = CasesAB2;

type CasesRefPercentEncodedOutput = CasesAB2;

type CasesAB2 = boolean;

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

type CasesRefAnchorInput = unknown;

type CasesRefAnchorOutput = unknown;

type CasesNotInput = string;

type CasesNotOutput = string;

type CasesIfThenElseInput = { a?: string };

type CasesIfThenElseOutput = { a?: string };

type CasesDependentSchemasInput = { a?: number };

type CasesDependentSchemasOutput = { a?: number };

type CasesUnevaluatedInput = { a?: number[] };

type CasesUnevaluatedOutput = { a?: number[] };

type CasesUnevaluatedTrueInput = { [key: string]: unknown };

type CasesUnevaluatedTrueOutput = { [key: string]: unknown };

type CasesDynamicRefsInput = unknown;

type CasesDynamicRefsOutput = unknown;

type CasesDepthLimitInput = unknown[][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][];

type CasesDepthLimitOutput = unknown[][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][];

type CasesValidationKeywordsAreNotDiagnosticsInput = string;

type CasesValidationKeywordsAreNotDiagnosticsOutput = string;

declare const cases: {
  empty_object(input: CasesEmptyObjectInput): Promise<CasesEmptyObjectOutput>;
  "true"(input: CasesTrueInput): Promise<CasesTrueOutput>;
  "false"(input: CasesFalseInput): Promise<CasesFalseOutput>;
  no_bytes(input: CasesNoBytesInput): Promise<unknown>;
  invalid_JSON(input: CasesInvalidJSONInput): Promise<unknown>;
  trailing_data(input: CasesTrailingDataInput): Promise<unknown>;
  not_a_schema(input: CasesNotASchemaInput): Promise<CasesNotASchemaOutput>;
  "null"(input: CasesNullInput): Promise<unknown>;
  unknown_type_name(input: CasesUnknownTypeNameInput): Promise<CasesUnknownTypeNameOutput>;
  draft_3_any(input: CasesDraft3AnyInput): Promise<CasesDraft3AnyOutput>;
  string(input: CasesStringInput): Promise<CasesStringOutput>;
  number(input: CasesNumberInput): Promise<CasesNumberOutput>;
  integer(input: CasesIntegerInput): Promise<CasesIntegerOutput>;
  boolean(input: CasesBooleanInput): Promise<CasesBooleanOutput>;
  null_type(input: CasesNullTypeInput): Promise<CasesNullTypeOutput>;
  type_array(input: CasesTypeArrayInput): Promise<CasesTypeArrayOutput>;
  type_array_dedup(input: CasesTypeArrayDedupInput): Promise<CasesTypeArrayDedupOutput>;
  type_array_with_object(input: CasesTypeArrayWithObjectInput): Promise<CasesTypeArrayWithObjectOutput>;
  empty_type_array(input: CasesEmptyTypeArrayInput): Promise<CasesEmptyTypeArrayOutput>;
  enum_strings(input: CasesEnumStringsInput): Promise<CasesEnumStringsOutput>;
  enum_mixed(input: CasesEnumMixedInput): Promise<CasesEnumMixedOutput>;
  enum_duplicates(input: CasesEnumDuplicatesInput): Promise<CasesEnumDuplicatesOutput>;
  enum_empty(input: CasesEnumEmptyInput): Promise<CasesEnumEmptyOutput>;
  enum_object_and_array(input: CasesEnumObjectAndArrayInput): Promise<CasesEnumObjectAndArrayOutput>;
  enum_not_a_list(input: CasesEnumNotAListInput): Promise<CasesEnumNotAListOutput>;
  const_string(input: CasesConstStringInput): Promise<CasesConstStringOutput>;
  const_wins_over_type(input: CasesConstWinsOverTypeInput): Promise<CasesConstWinsOverTypeOutput>;
  const_null(input: CasesConstNullInput): Promise<CasesConstNullOutput>;
  const_empty_object(input: CasesConstEmptyObjectInput): Promise<CasesConstEmptyObjectOutput>;
  anyOf(input: CasesAnyOfInput): Promise<CasesAnyOfOutput>;
  oneOf(input: CasesOneOfInput): Promise<CasesOneOfOutput>;
  anyOf_with_unknown_member(input: CasesAnyOfWithUnknownMemberInput): Promise<CasesAnyOfWithUnknownMemberOutput>;
  anyOf_with_never_member(input: CasesAnyOfWithNeverMemberInput): Promise<CasesAnyOfWithNeverMemberOutput>;
  anyOf_constraining_a_type(input: CasesAnyOfConstrainingATypeInput): Promise<CasesAnyOfConstrainingATypeOutput>;
  allOf(input: CasesAllOfInput): Promise<CasesAllOfOutput>;
  allOf_of_union(input: CasesAllOfOfUnionInput): Promise<CasesAllOfOfUnionOutput>;
  allOf_with_false(input: CasesAllOfWithFalseInput): Promise<CasesAllOfWithFalseOutput>;
  union_of_intersections(input: CasesUnionOfIntersectionsInput): Promise<CasesUnionOfIntersectionsOutput>;
  pydantic_optional(input: CasesPydanticOptionalInput): Promise<CasesPydanticOptionalOutput>;
  nullable(input: CasesNullableInput): Promise<CasesNullableOutput>;
  nullable_false(input: CasesNullableFalseInput): Promise<CasesNullableFalseOutput>;
  x_nullable(input: CasesXNullableInput): Promise<CasesXNullableOutput>;
  nullable_enum(input: CasesNullableEnumInput): Promise<CasesNullableEnumOutput>;
  array_of_strings(input: CasesArrayOfStringsInput): Promise<CasesArrayOfStringsOutput>;
  array_without_items(input: CasesArrayWithoutItemsInput): Promise<CasesArrayWithoutItemsOutput>;
  array_of_union(input: CasesArrayOfUnionInput): Promise<CasesArrayOfUnionOutput>;
  nested_arrays(input: CasesNestedArraysInput): Promise<CasesNestedArraysOutput>;
  items_false(input: CasesItemsFalseInput): Promise<CasesItemsFalseOutput>;
  items_inferred(input: CasesItemsInferredInput): Promise<CasesItemsInferredOutput>;
  prefixItems_closed(input: CasesPrefixItemsClosedInput): Promise<CasesPrefixItemsClosedOutput>;
  prefixItems_rest(input: CasesPrefixItemsRestInput): Promise<CasesPrefixItemsRestOutput>;
  prefixItems_open(input: CasesPrefixItemsOpenInput): Promise<CasesPrefixItemsOpenOutput>;
  draft_4_tuple(input: CasesDraft4TupleInput): Promise<CasesDraft4TupleOutput>;
  draft_4_tuple_rest(input: CasesDraft4TupleRestInput): Promise<CasesDraft4TupleRestOutput>;
  object(input: CasesObjectInput): Promise<CasesObjectOutput>;
  required_and_optional(input: CasesRequiredAndOptionalInput): Promise<CasesRequiredAndOptionalOutput>;
  required_without_property(input: CasesRequiredWithoutPropertyInput): Promise<CasesRequiredWithoutPropertyOutput>;
  object_inferred_from_properties(input: CasesObjectInferredFromPropertiesInput): Promise<CasesObjectInferredFromPropertiesOutput>;
  draft_3_required(input: CasesDraft3RequiredInput): Promise<CasesDraft3RequiredOutput>;
  quoted_keys(input: CasesQuotedKeysInput): Promise<CasesQuotedKeysOutput>;
  reserved_keys_quoted(input: CasesReservedKeysQuotedInput): Promise<CasesReservedKeysQuotedOutput>;
  quote_in_key(input: CasesQuoteInKeyInput): Promise<CasesQuoteInKeyOutput>;
  additionalProperties_true(input: CasesAdditionalPropertiesTrueInput): Promise<CasesAdditionalPropertiesTrueOutput>;
  additionalProperties_schema(input: CasesAdditionalPropertiesSchemaInput): Promise<CasesAdditionalPropertiesSchemaOutput>;
  additionalProperties_false(input: CasesAdditionalPropertiesFalseInput): Promise<CasesAdditionalPropertiesFalseOutput>;
  additionalProperties_false_with_properties(input: CasesAdditionalPropertiesFalseWithPropertiesInput): Promise<CasesAdditionalPropertiesFalseWithPropertiesOutput>;
  index_widened_for_properties(input: CasesIndexWidenedForPropertiesInput): Promise<CasesIndexWidenedForPropertiesOutput>;
  index_widened_for_optional(input: CasesIndexWidenedForOptionalInput): Promise<CasesIndexWidenedForOptionalOutput>;
  index_unknown_with_properties(input: CasesIndexUnknownWithPropertiesInput): Promise<CasesIndexUnknownWithPropertiesOutput>;
  index_unknown_for_object_properties(input: CasesIndexUnknownForObjectPropertiesInput): Promise<CasesIndexUnknownForObjectPropertiesOutput>;
  patternProperties(input: CasesPatternPropertiesInput): Promise<CasesPatternPropertiesOutput>;
  nested_object(input: CasesNestedObjectInput): Promise<CasesNestedObjectOutput>;
  long_object_breaks_lines(input: CasesLongObjectBreaksLinesInput): Promise<CasesLongObjectBreaksLinesOutput>;
  object_in_union_stays_multi_line(input: CasesObjectInUnionStaysMultiLineInput): Promise<CasesObjectInUnionStaysMultiLineOutput>;
  description(input: CasesDescriptionInput): Promise<CasesDescriptionOutput>;
  description_escaped(input: CasesDescriptionEscapedInput): Promise<CasesDescriptionEscapedOutput>;
  multi_line_description(input: CasesMultiLineDescriptionInput): Promise<CasesMultiLineDescriptionOutput>;
  doc_tags(input: CasesDocTagsInput): Promise<CasesDocTagsOutput>;
  OpenAPI_example(input: CasesOpenAPIExampleInput): Promise<CasesOpenAPIExampleOutput>;
  long_default_truncated(input: CasesLongDefaultTruncatedInput): Promise<CasesLongDefaultTruncatedOutput>;
  title_is_not_documentation(input: CasesTitleIsNotDocumentationInput): Promise<CasesTitleIsNotDocumentationOutput>;
  ref_$defs(input: CasesRefDefsInput): Promise<CasesRefDefsOutput>;
  ref_definitions(input: CasesRefDefinitionsInput): Promise<CasesRefDefinitionsOutput>;
  ref_components(input: CasesRefComponentsInput): Promise<CasesRefComponentsOutput>;
  ref_with_nullable_sibling(input: CasesRefWithNullableSiblingInput): Promise<CasesRefWithNullableSiblingOutput>;
  ref_with_constraints(input: CasesRefWithConstraintsInput): Promise<CasesRefWithConstraintsOutput>;
  ref_escaped_pointer(input: CasesRefEscapedPointerInput): Promise<CasesRefEscapedPointerOutput>;
  ref_percent_encoded(input: CasesRefPercentEncodedInput): Promise<CasesRefPercentEncodedOutput>;
  ref_into_array(input: CasesRefIntoArrayInput): Promise<CasesRefIntoArrayOutput>;
  ref_bad_array_index(input: CasesRefBadArrayIndexInput): Promise<CasesRefBadArrayIndexOutput>;
  ref_unresolvable(input: CasesRefUnresolvableInput): Promise<CasesRefUnresolvableOutput>;
  ref_remote(input: CasesRefRemoteInput): Promise<CasesRefRemoteOutput>;
  ref_not_a_string(input: CasesRefNotAStringInput): Promise<CasesRefNotAStringOutput>;
  ref_recursive(input: CasesRefRecursiveInput): Promise<CasesRefRecursiveOutput>;
  ref_mutually_recursive(input: CasesRefMutuallyRecursiveInput): Promise<CasesRefMutuallyRecursiveOutput>;
  ref_self_alias(input: CasesRefSelfAliasInput): Promise<CasesRefSelfAliasOutput>;
  ref_anchor(input: CasesRefAnchorInput): Promise<CasesRefAnchorOutput>;
  not(input: CasesNotInput): Promise<CasesNotOutput>;
  if_then_else(input: CasesIfThenElseInput): Promise<CasesIfThenElseOutput>;
  dependent_schemas(input: CasesDependentSchemasInput): Promise<CasesDependentSchemasOutput>;
  unevaluated(input: CasesUnevaluatedInput): Promise<CasesUnevaluatedOutput>;
  unevaluated_true(input: CasesUnevaluatedTrueInput): Promise<CasesUnevaluatedTrueOutput>;
  dynamic_refs(input: CasesDynamicRefsInput): Promise<CasesDynamicRefsOutput>;
  depth_limit(input: CasesDepthLimitInput): Promise<CasesDepthLimitOutput>;
  validation_keywords_are_not_diagnostics(input: CasesValidationKeywordsAreNotDiagnosticsInput): Promise<CasesValidationKeywordsAreNotDiagnosticsOutput>;
};
