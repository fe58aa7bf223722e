type WordsBreakInput = WordsWords;

type WordsWords = {
  "Infinity"?: string;
  "NaN"?: string;
  __proto__?: string;
  abstract?: string;
  accessor?: string;
  any?: string;
  "arguments"?: string;
  as?: string;
  assert?: string;
  asserts?: string;
  "async"?: string;
  "await"?: string;
  bigint?: string;
  boolean?: string;
  "break"?: string;
  "case"?: string;
  "catch"?: string;
  "class": string;
  "const"?: string;
  constructor?: string | Object["constructor"];
  "continue"?: string;
  "debugger"?: string;
  declare?: string;
  "default"?: string;
  "delete"?: string;
  "do"?: string;
  "else"?: string;
  "enum"?: string;
  "eval"?: string;
  "export"?: string;
  "extends"?: string;
  "false"?: string;
  "finally"?: string;
  "for"?: string;
  from?: string;
  "function"?: string;
  get?: string;
  global?: string;
  hasOwnProperty?: string | Object["hasOwnProperty"];
  "if"?: string;
  "implements"?: string;
  "import"?: string;
  "in"?: string;
  infer?: string;
  "instanceof"?: string;
  "interface"?: string;
  is?: string;
  keyof?: string;
  "let"?: string;
  module?: string;
  namespace?: string;
  never?: string;
  "new"?: string;
  "null"?: string;
  number?: string;
  object?: string;
  of?: string;
  out?: string;
  override?: string;
  "package"?: string;
  "private"?: string;
  "protected"?: string;
  prototype?: string;
  "public"?: string;
  readonly?: string;
  require?: string;
  "return"?: string;
  satisfies?: string;
  set?: string;
  "static"?: string;
  string?: string;
  "super"?: string;
  "switch"?: string;
  symbol?: string;
  then?: string;
  "this"?: string;
  "throw"?: string;
  toString?: string | Object["toString"];
  "true"?: string;
  "try"?: string;
  type: string;
  "typeof"?: string;
  "undefined"?: string;
  unique?: string;
  unknown?: string;
  using?: string;
  valueOf?: string | Object["valueOf"];
  "var"?: string;
  "void"?: string;
  "while"?: string;
  "with"?: string;
  "yield"?: string;
};

type WordsCaseInput = WordsWords;

type WordsCatchInput = WordsWords;

type WordsClassInput = WordsWords;

type WordsConstInput = WordsWords;

type WordsContinueInput = WordsWords;

type WordsDebuggerInput = WordsWords;

type WordsDefaultInput = WordsWords;

type WordsDeleteInput = WordsWords;

type WordsDoInput = WordsWords;

type WordsElseInput = WordsWords;

type WordsEnumInput = WordsWords;

type WordsExportInput = WordsWords;

type WordsExtendsInput = WordsWords;

type WordsFalseInput = WordsWords;

type WordsFinallyInput = WordsWords;

type WordsForInput = WordsWords;

type WordsFunctionInput = WordsWords;

type WordsIfInput = WordsWords;

type WordsImportInput = WordsWords;

type WordsInInput = WordsWords;

type WordsInstanceofInput = WordsWords;

type WordsNewInput = WordsWords;

type WordsNullInput = WordsWords;

type WordsReturnInput = WordsWords;

type WordsSuperInput = WordsWords;

type WordsSwitchInput = WordsWords;

type WordsThisInput = WordsWords;

type WordsThrowInput = WordsWords;

type WordsTrueInput = WordsWords;

type WordsTryInput = WordsWords;

type WordsTypeofInput = WordsWords;

type WordsVarInput = WordsWords;

type WordsVoidInput = WordsWords;

type WordsWhileInput = WordsWords;

type WordsWithInput = WordsWords;

type WordsYieldInput = WordsWords;

type WordsLetInput = WordsWords;

type WordsStaticInput = WordsWords;

type WordsImplementsInput = WordsWords;

type WordsInterfaceInput = WordsWords;

type WordsPackageInput = WordsWords;

type WordsPrivateInput = WordsWords;

type WordsProtectedInput = WordsWords;

type WordsPublicInput = WordsWords;

type WordsAwaitInput = WordsWords;

type WordsArgumentsInput = WordsWords;

type WordsEvalInput = WordsWords;

type WordsUndefinedInput = WordsWords;

type WordsNaNInput = WordsWords;

type WordsInfinityInput = WordsWords;

type WordsAsyncInput = WordsWords;

type WordsOfInput = WordsWords;

type WordsGetInput = WordsWords;

type WordsSetInput = WordsWords;

type WordsAbstractInput = WordsWords;

type WordsAccessorInput = WordsWords;

type WordsAnyInput = WordsWords;

type WordsAsInput = WordsWords;

type WordsAssertsInput = WordsWords;

type WordsAssertInput = WordsWords;

type WordsBigintInput = WordsWords;

type WordsBooleanInput = WordsWords;

type WordsDeclareInput = WordsWords;

type WordsFromInput = WordsWords;

type WordsGlobalInput = WordsWords;

type WordsInferInput = WordsWords;

type WordsIsInput = WordsWords;

type WordsKeyofInput = WordsWords;

type WordsModuleInput = WordsWords;

type WordsNamespaceInput = WordsWords;

type WordsNeverInput = WordsWords;

type WordsNumberInput = WordsWords;

type WordsObjectInput = WordsWords;

type WordsOutInput = WordsWords;

type WordsOverrideInput = WordsWords;

type WordsReadonlyInput = WordsWords;

type WordsRequireInput = WordsWords;

type WordsSatisfiesInput = WordsWords;

type WordsStringInput = WordsWords;

type WordsSymbolInput = WordsWords;

type WordsTypeInput = WordsWords;

type WordsUniqueInput = WordsWords;

type WordsUnknownInput = WordsWords;

type WordsUsingInput = WordsWords;

type WordsConstructorInput = WordsWords;

type WordsPrototypeInput = WordsWords;

type WordsProtoInput = WordsWords;

type WordsToStringInput = WordsWords;

type WordsValueOfInput = WordsWords;

type WordsHasOwnPropertyInput = WordsWords;

type WordsThenInput = WordsWords;

declare const words: {
  "break"(input: WordsBreakInput): Promise<unknown>;
  "case"(input: WordsCaseInput): Promise<unknown>;
  "catch"(input: WordsCatchInput): Promise<unknown>;
  "class"(input: WordsClassInput): Promise<unknown>;
  "const"(input: WordsConstInput): Promise<unknown>;
  "continue"(input: WordsContinueInput): Promise<unknown>;
  "debugger"(input: WordsDebuggerInput): Promise<unknown>;
  "default"(input: WordsDefaultInput): Promise<unknown>;
  "delete"(input: WordsDeleteInput): Promise<unknown>;
  "do"(input: WordsDoInput): Promise<unknown>;
  "else"(input: WordsElseInput): Promise<unknown>;
  "enum"(input: WordsEnumInput): Promise<unknown>;
  "export"(input: WordsExportInput): Promise<unknown>;
  "extends"(input: WordsExtendsInput): Promise<unknown>;
  "false"(input: WordsFalseInput): Promise<unknown>;
  "finally"(input: WordsFinallyInput): Promise<unknown>;
  "for"(input: WordsForInput): Promise<unknown>;
  "function"(input: WordsFunctionInput): Promise<unknown>;
  "if"(input: WordsIfInput): Promise<unknown>;
  "import"(input: WordsImportInput): Promise<unknown>;
  "in"(input: WordsInInput): Promise<unknown>;
  "instanceof"(input: WordsInstanceofInput): Promise<unknown>;
  "new"(input: WordsNewInput): Promise<unknown>;
  "null"(input: WordsNullInput): Promise<unknown>;
  "return"(input: WordsReturnInput): Promise<unknown>;
  "super"(input: WordsSuperInput): Promise<unknown>;
  "switch"(input: WordsSwitchInput): Promise<unknown>;
  "this"(input: WordsThisInput): Promise<unknown>;
  "throw"(input: WordsThrowInput): Promise<unknown>;
  "true"(input: WordsTrueInput): Promise<unknown>;
  "try"(input: WordsTryInput): Promise<unknown>;
  "typeof"(input: WordsTypeofInput): Promise<unknown>;
  "var"(input: WordsVarInput): Promise<unknown>;
  "void"(input: WordsVoidInput): Promise<unknown>;
  "while"(input: WordsWhileInput): Promise<unknown>;
  "with"(input: WordsWithInput): Promise<unknown>;
  "yield"(input: WordsYieldInput): Promise<unknown>;
  "let"(input: WordsLetInput): Promise<unknown>;
  "static"(input: WordsStaticInput): Promise<unknown>;
  "implements"(input: WordsImplementsInput): Promise<unknown>;
  "interface"(input: WordsInterfaceInput): Promise<unknown>;
  "package"(input: WordsPackageInput): Promise<unknown>;
  "private"(input: WordsPrivateInput): Promise<unknown>;
  "protected"(input: WordsProtectedInput): Promise<unknown>;
  "public"(input: WordsPublicInput): Promise<unknown>;
  "await"(input: WordsAwaitInput): Promise<unknown>;
  "arguments"(input: WordsArgumentsInput): Promise<unknown>;
  "eval"(input: WordsEvalInput): Promise<unknown>;
  "undefined"(input: WordsUndefinedInput): Promise<unknown>;
  "NaN"(input: WordsNaNInput): Promise<unknown>;
  "Infinity"(input: WordsInfinityInput): Promise<unknown>;
  "async"(input: WordsAsyncInput): Promise<unknown>;
  of(input: WordsOfInput): Promise<unknown>;
  get(input: WordsGetInput): Promise<unknown>;
  set(input: WordsSetInput): Promise<unknown>;
  abstract(input: WordsAbstractInput): Promise<unknown>;
  accessor(input: WordsAccessorInput): Promise<unknown>;
  any(input: WordsAnyInput): Promise<unknown>;
  as(input: WordsAsInput): Promise<unknown>;
  asserts(input: WordsAssertsInput): Promise<unknown>;
  assert(input: WordsAssertInput): Promise<unknown>;
  bigint(input: WordsBigintInput): Promise<unknown>;
  boolean(input: WordsBooleanInput): Promise<unknown>;
  declare(input: WordsDeclareInput): Promise<unknown>;
  from(input: WordsFromInput): Promise<unknown>;
  global(input: WordsGlobalInput): Promise<unknown>;
  infer(input: WordsInferInput): Promise<unknown>;
  is(input: WordsIsInput): Promise<unknown>;
  keyof(input: WordsKeyofInput): Promise<unknown>;
  module(input: WordsModuleInput): Promise<unknown>;
  namespace(input: WordsNamespaceInput): Promise<unknown>;
  never(input: WordsNeverInput): Promise<unknown>;
  number(input: WordsNumberInput): Promise<unknown>;
  object(input: WordsObjectInput): Promise<unknown>;
  out(input: WordsOutInput): Promise<unknown>;
  override(input: WordsOverrideInput): Promise<unknown>;
  readonly(input: WordsReadonlyInput): Promise<unknown>;
  require(input: WordsRequireInput): Promise<unknown>;
  satisfies(input: WordsSatisfiesInput): Promise<unknown>;
  string(input: WordsStringInput): Promise<unknown>;
  symbol(input: WordsSymbolInput): Promise<unknown>;
  type(input: WordsTypeInput): Promise<unknown>;
  unique(input: WordsUniqueInput): Promise<unknown>;
  unknown(input: WordsUnknownInput): Promise<unknown>;
  using(input: WordsUsingInput): Promise<unknown>;
  constructor(input: WordsConstructorInput): Promise<unknown>;
  prototype(input: WordsPrototypeInput): Promise<unknown>;
  __proto__(input: WordsProtoInput): Promise<unknown>;
  toString(input: WordsToStringInput): Promise<unknown>;
  valueOf(input: WordsValueOfInput): Promise<unknown>;
  hasOwnProperty(input: WordsHasOwnPropertyInput): Promise<unknown>;
  then(input: WordsThenInput): Promise<unknown>;
};

type BreakMInput = { [key: string]: unknown };

declare const _break: {
  m(input: BreakMInput): Promise<unknown>;
};

type NsBreakMInput = { [key: string]: unknown };

type NsCaseMInput = { [key: string]: unknown };

type NsCatchMInput = { [key: string]: unknown };

type NsClassMInput = { [key: string]: unknown };

type NsConstMInput = { [key: string]: unknown };

type NsContinueMInput = { [key: string]: unknown };

type NsDebuggerMInput = { [key: string]: unknown };

type NsDefaultMInput = { [key: string]: unknown };

type NsDeleteMInput = { [key: string]: unknown };

type NsDoMInput = { [key: string]: unknown };

type NsElseMInput = { [key: string]: unknown };

type NsEnumMInput = { [key: string]: unknown };

type NsExportMInput = { [key: string]: unknown };

type NsExtendsMInput = { [key: string]: unknown };

type NsFalseMInput = { [key: string]: unknown };

type NsFinallyMInput = { [key: string]: unknown };

type NsForMInput = { [key: string]: unknown };

type NsFunctionMInput = { [key: string]: unknown };

type NsIfMInput = { [key: string]: unknown };

type NsImportMInput = { [key: string]: unknown };

type NsInMInput = { [key: string]: unknown };

type NsInstanceofMInput = { [key: string]: unknown };

type NsNewMInput = { [key: string]: unknown };

type NsNullMInput = { [key: string]: unknown };

type NsReturnMInput = { [key: string]: unknown };

type NsSuperMInput = { [key: string]: unknown };

type NsSwitchMInput = { [key: string]: unknown };

type NsThisMInput = { [key: string]: unknown };

type NsThrowMInput = { [key: string]: unknown };

type NsTrueMInput = { [key: string]: unknown };

type NsTryMInput = { [key: string]: unknown };

type NsTypeofMInput = { [key: string]: unknown };

type NsVarMInput = { [key: string]: unknown };

type NsVoidMInput = { [key: string]: unknown };

type NsWhileMInput = { [key: string]: unknown };

type NsWithMInput = { [key: string]: unknown };

type NsYieldMInput = { [key: string]: unknown };

type NsLetMInput = { [key: string]: unknown };

type NsStaticMInput = { [key: string]: unknown };

type NsImplementsMInput = { [key: string]: unknown };

type NsInterfaceMInput = { [key: string]: unknown };

type NsPackageMInput = { [key: string]: unknown };

type NsPrivateMInput = { [key: string]: unknown };

type NsProtectedMInput = { [key: string]: unknown };

type NsPublicMInput = { [key: string]: unknown };

type NsAwaitMInput = { [key: string]: unknown };

type NsArgumentsMInput = { [key: string]: unknown };

type NsEvalMInput = { [key: string]: unknown };

type NsUndefinedMInput = { [key: string]: unknown };

type NsNaNMInput = { [key: string]: unknown };

type NsInfinityMInput = { [key: string]: unknown };

type NsAsyncMInput = { [key: string]: unknown };

type NsOfMInput = { [key: string]: unknown };

type NsGetMInput = { [key: string]: unknown };

type NsSetMInput = { [key: string]: unknown };

type NsAbstractMInput = { [key: string]: unknown };

type NsAccessorMInput = { [key: string]: unknown };

type NsAnyMInput = { [key: string]: unknown };

type NsAsMInput = { [key: string]: unknown };

type NsAssertsMInput = { [key: string]: unknown };

type NsAssertMInput = { [key: string]: unknown };

type NsBigintMInput = { [key: string]: unknown };

type NsBooleanMInput = { [key: string]: unknown };

type NsDeclareMInput = { [key: string]: unknown };

type NsFromMInput = { [key: string]: unknown };

type NsGlobalMInput = { [key: string]: unknown };

type NsInferMInput = { [key: string]: unknown };

type NsIsMInput = { [key: string]: unknown };

type NsKeyofMInput = { [key: string]: unknown };

type NsModuleMInput = { [key: string]: unknown };

type NsNamespaceMInput = { [key: string]: unknown };

type NsNeverMInput = { [key: string]: unknown };

type NsNumberMInput = { [key: string]: unknown };

type NsObjectMInput = { [key: string]: unknown };

type NsOutMInput = { [key: string]: unknown };

type NsOverrideMInput = { [key: string]: unknown };

type NsReadonlyMInput = { [key: string]: unknown };

type NsRequireMInput = { [key: string]: unknown };

type NsSatisfiesMInput = { [key: string]: unknown };

type NsStringMInput = { [key: string]: unknown };

type NsSymbolMInput = { [key: string]: unknown };

type NsTypeMInput = { [key: string]: unknown };

type NsUniqueMInput = { [key: string]: unknown };

type NsUnknownMInput = { [key: string]: unknown };

type NsUsingMInput = { [key: string]: unknown };

type NsConstructorMInput = { [key: string]: unknown };

type NsPrototypeMInput = { [key: string]: unknown };

type NsProtoMInput = { [key: string]: unknown };

type NsToStringMInput = { [key: string]: unknown };

type NsValueOfMInput = { [key: string]: unknown };

type NsHasOwnPropertyMInput = { [key: string]: unknown };

type NsThenMInput = { [key: string]: unknown };

declare const ns: {
  _break: {
    m(input: NsBreakMInput): Promise<unknown>;
  };
  _case: {
    m(input: NsCaseMInput): Promise<unknown>;
  };
  _catch: {
    m(input: NsCatchMInput): Promise<unknown>;
  };
  _class: {
    m(input: NsClassMInput): Promise<unknown>;
  };
  _const: {
    m(input: NsConstMInput): Promise<unknown>;
  };
  _continue: {
    m(input: NsContinueMInput): Promise<unknown>;
  };
  _debugger: {
    m(input: NsDebuggerMInput): Promise<unknown>;
  };
  _default: {
    m(input: NsDefaultMInput): Promise<unknown>;
  };
  _delete: {
    m(input: NsDeleteMInput): Promise<unknown>;
  };
  _do: {
    m(input: NsDoMInput): Promise<unknown>;
  };
  _else: {
    m(input: NsElseMInput): Promise<unknown>;
  };
  _enum: {
    m(input: NsEnumMInput): Promise<unknown>;
  };
  _export: {
    m(input: NsExportMInput): Promise<unknown>;
  };
  _extends: {
    m(input: NsExtendsMInput): Promise<unknown>;
  };
  _false: {
    m(input: NsFalseMInput): Promise<unknown>;
  };
  _finally: {
    m(input: NsFinallyMInput): Promise<unknown>;
  };
  _for: {
    m(input: NsForMInput): Promise<unknown>;
  };
  _function: {
    m(input: NsFunctionMInput): Promise<unknown>;
  };
  _if: {
    m(input: NsIfMInput): Promise<unknown>;
  };
  _import: {
    m(input: NsImportMInput): Promise<unknown>;
  };
  _in: {
    m(input: NsInMInput): Promise<unknown>;
  };
  _instanceof: {
    m(input: NsInstanceofMInput): Promise<unknown>;
  };
  _new: {
    m(input: NsNewMInput): Promise<unknown>;
  };
  _null: {
    m(input: NsNullMInput): Promise<unknown>;
  };
  _return: {
    m(input: NsReturnMInput): Promise<unknown>;
  };
  _super: {
    m(input: NsSuperMInput): Promise<unknown>;
  };
  _switch: {
    m(input: NsSwitchMInput): Promise<unknown>;
  };
  _this: {
    m(input: NsThisMInput): Promise<unknown>;
  };
  _throw: {
    m(input: NsThrowMInput): Promise<unknown>;
  };
  _true: {
    m(input: NsTrueMInput): Promise<unknown>;
  };
  _try: {
    m(input: NsTryMInput): Promise<unknown>;
  };
  _typeof: {
    m(input: NsTypeofMInput): Promise<unknown>;
  };
  _var: {
    m(input: NsVarMInput): Promise<unknown>;
  };
  _void: {
    m(input: NsVoidMInput): Promise<unknown>;
  };
  _while: {
    m(input: NsWhileMInput): Promise<unknown>;
  };
  _with: {
    m(input: NsWithMInput): Promise<unknown>;
  };
  _yield: {
    m(input: NsYieldMInput): Promise<unknown>;
  };
  _let: {
    m(input: NsLetMInput): Promise<unknown>;
  };
  _static: {
    m(input: NsStaticMInput): Promise<unknown>;
  };
  _implements: {
    m(input: NsImplementsMInput): Promise<unknown>;
  };
  _interface: {
    m(input: NsInterfaceMInput): Promise<unknown>;
  };
  _package: {
    m(input: NsPackageMInput): Promise<unknown>;
  };
  _private: {
    m(input: NsPrivateMInput): Promise<unknown>;
  };
  _protected: {
    m(input: NsProtectedMInput): Promise<unknown>;
  };
  _public: {
    m(input: NsPublicMInput): Promise<unknown>;
  };
  _await: {
    m(input: NsAwaitMInput): Promise<unknown>;
  };
  _arguments: {
    m(input: NsArgumentsMInput): Promise<unknown>;
  };
  _eval: {
    m(input: NsEvalMInput): Promise<unknown>;
  };
  _undefined: {
    m(input: NsUndefinedMInput): Promise<unknown>;
  };
  _NaN: {
    m(input: NsNaNMInput): Promise<unknown>;
  };
  _Infinity: {
    m(input: NsInfinityMInput): Promise<unknown>;
  };
  _async: {
    m(input: NsAsyncMInput): Promise<unknown>;
  };
  of: {
    m(input: NsOfMInput): Promise<unknown>;
  };
  get: {
    m(input: NsGetMInput): Promise<unknown>;
  };
  set: {
    m(input: NsSetMInput): Promise<unknown>;
  };
  abstract: {
    m(input: NsAbstractMInput): Promise<unknown>;
  };
  accessor: {
    m(input: NsAccessorMInput): Promise<unknown>;
  };
  any: {
    m(input: NsAnyMInput): Promise<unknown>;
  };
  as: {
    m(input: NsAsMInput): Promise<unknown>;
  };
  asserts: {
    m(input: NsAssertsMInput): Promise<unknown>;
  };
  assert: {
    m(input: NsAssertMInput): Promise<unknown>;
  };
  bigint: {
    m(input: NsBigintMInput): Promise<unknown>;
  };
  boolean: {
    m(input: NsBooleanMInput): Promise<unknown>;
  };
  declare: {
    m(input: NsDeclareMInput): Promise<unknown>;
  };
  from: {
    m(input: NsFromMInput): Promise<unknown>;
  };
  global: {
    m(input: NsGlobalMInput): Promise<unknown>;
  };
  infer: {
    m(input: NsInferMInput): Promise<unknown>;
  };
  is: {
    m(input: NsIsMInput): Promise<unknown>;
  };
  keyof: {
    m(input: NsKeyofMInput): Promise<unknown>;
  };
  module: {
    m(input: NsModuleMInput): Promise<unknown>;
  };
  namespace: {
    m(input: NsNamespaceMInput): Promise<unknown>;
  };
  never: {
    m(input: NsNeverMInput): Promise<unknown>;
  };
  number: {
    m(input: NsNumberMInput): Promise<unknown>;
  };
  object: {
    m(input: NsObjectMInput): Promise<unknown>;
  };
  out: {
    m(input: NsOutMInput): Promise<unknown>;
  };
  override: {
    m(input: NsOverrideMInput): Promise<unknown>;
  };
  readonly: {
    m(input: NsReadonlyMInput): Promise<unknown>;
  };
  require: {
    m(input: NsRequireMInput): Promise<unknown>;
  };
  satisfies: {
    m(input: NsSatisfiesMInput): Promise<unknown>;
  };
  string: {
    m(input: NsStringMInput): Promise<unknown>;
  };
  symbol: {
    m(input: NsSymbolMInput): Promise<unknown>;
  };
  type: {
    m(input: NsTypeMInput): Promise<unknown>;
  };
  unique: {
    m(input: NsUniqueMInput): Promise<unknown>;
  };
  unknown: {
    m(input: NsUnknownMInput): Promise<unknown>;
  };
  using: {
    m(input: NsUsingMInput): Promise<unknown>;
  };
  constructor: {
    m(input: NsConstructorMInput): Promise<unknown>;
  };
  prototype: {
    m(input: NsPrototypeMInput): Promise<unknown>;
  };
  ___proto__: {
    m(input: NsProtoMInput): Promise<unknown>;
  };
  toString: {
    m(input: NsToStringMInput): Promise<unknown>;
  };
  valueOf: {
    m(input: NsValueOfMInput): Promise<unknown>;
  };
  hasOwnProperty: {
    m(input: NsHasOwnPropertyMInput): Promise<unknown>;
  };
  then: {
    m(input: NsThenMInput): Promise<unknown>;
  };
};

type CaseMInput = { [key: string]: unknown };

declare const _case: {
  m(input: CaseMInput): Promise<unknown>;
};

type CatchMInput = { [key: string]: unknown };

declare const _catch: {
  m(input: CatchMInput): Promise<unknown>;
};

type ClassMInput = { [key: string]: unknown };

declare const _class: {
  m(input: ClassMInput): Promise<unknown>;
};

type ConstMInput = { [key: string]: unknown };

declare const _const: {
  m(input: ConstMInput): Promise<unknown>;
};

type ContinueMInput = { [key: string]: unknown };

declare const _continue: {
  m(input: ContinueMInput): Promise<unknown>;
};

type DebuggerMInput = { [key: string]: unknown };

declare const _debugger: {
  m(input: DebuggerMInput): Promise<unknown>;
};

type DefaultMInput = { [key: string]: unknown };

declare const _default: {
  m(input: DefaultMInput): Promise<unknown>;
};

type DeleteMInput = { [key: string]: unknown };

declare const _delete: {
  m(input: DeleteMInput): Promise<unknown>;
};

type DoMInput = { [key: string]: unknown };

declare const _do: {
  m(input: DoMInput): Promise<unknown>;
};

type ElseMInput = { [key: string]: unknown };

declare const _else: {
  m(input: ElseMInput): Promise<unknown>;
};

type EnumMInput = { [key: string]: unknown };

declare const _enum: {
  m(input: EnumMInput): Promise<unknown>;
};

type ExportMInput = { [key: string]: unknown };

declare const _export: {
  m(input: ExportMInput): Promise<unknown>;
};

type ExtendsMInput = { [key: string]: unknown };

declare const _extends: {
  m(input: ExtendsMInput): Promise<unknown>;
};

type FalseMInput = { [key: string]: unknown };

declare const _false: {
  m(input: FalseMInput): Promise<unknown>;
};

type FinallyMInput = { [key: string]: unknown };

declare const _finally: {
  m(input: FinallyMInput): Promise<unknown>;
};

type ForMInput = { [key: string]: unknown };

declare const _for: {
  m(input: ForMInput): Promise<unknown>;
};

type FunctionMInput = { [key: string]: unknown };

declare const _function: {
  m(input: FunctionMInput): Promise<unknown>;
};

type IfMInput = { [key: string]: unknown };

declare const _if: {
  m(input: IfMInput): Promise<unknown>;
};

type ImportMInput = { [key: string]: unknown };

declare const _import: {
  m(input: ImportMInput): Promise<unknown>;
};

type InMInput = { [key: string]: unknown };

declare const _in: {
  m(input: InMInput): Promise<unknown>;
};

type InstanceofMInput = { [key: string]: unknown };

declare const _instanceof: {
  m(input: InstanceofMInput): Promise<unknown>;
};

type NewMInput = { [key: string]: unknown };

declare const _new: {
  m(input: NewMInput): Promise<unknown>;
};

type NullMInput = { [key: string]: unknown };

declare const _null: {
  m(input: NullMInput): Promise<unknown>;
};

type ReturnMInput = { [key: string]: unknown };

declare const _return: {
  m(input: ReturnMInput): Promise<unknown>;
};

type SuperMInput = { [key: string]: unknown };

declare const _super: {
  m(input: SuperMInput): Promise<unknown>;
};

type SwitchMInput = { [key: string]: unknown };

declare const _switch: {
  m(input: SwitchMInput): Promise<unknown>;
};

type ThisMInput = { [key: string]: unknown };

declare const _this: {
  m(input: ThisMInput): Promise<unknown>;
};

type ThrowMInput = { [key: string]: unknown };

declare const _throw: {
  m(input: ThrowMInput): Promise<unknown>;
};

type TrueMInput = { [key: string]: unknown };

declare const _true: {
  m(input: TrueMInput): Promise<unknown>;
};

type TryMInput = { [key: string]: unknown };

declare const _try: {
  m(input: TryMInput): Promise<unknown>;
};

type TypeofMInput = { [key: string]: unknown };

declare const _typeof: {
  m(input: TypeofMInput): Promise<unknown>;
};

type VarMInput = { [key: string]: unknown };

declare const _var: {
  m(input: VarMInput): Promise<unknown>;
};

type VoidMInput = { [key: string]: unknown };

declare const _void: {
  m(input: VoidMInput): Promise<unknown>;
};

type WhileMInput = { [key: string]: unknown };

declare const _while: {
  m(input: WhileMInput): Promise<unknown>;
};

type WithMInput = { [key: string]: unknown };

declare const _with: {
  m(input: WithMInput): Promise<unknown>;
};

type YieldMInput = { [key: string]: unknown };

declare const _yield: {
  m(input: YieldMInput): Promise<unknown>;
};

type LetMInput = { [key: string]: unknown };

declare const _let: {
  m(input: LetMInput): Promise<unknown>;
};

type StaticMInput = { [key: string]: unknown };

declare const _static: {
  m(input: StaticMInput): Promise<unknown>;
};

type ImplementsMInput = { [key: string]: unknown };

declare const _implements: {
  m(input: ImplementsMInput): Promise<unknown>;
};

type InterfaceMInput = { [key: string]: unknown };

declare const _interface: {
  m(input: InterfaceMInput): Promise<unknown>;
};

type PackageMInput = { [key: string]: unknown };

declare const _package: {
  m(input: PackageMInput): Promise<unknown>;
};

type PrivateMInput = { [key: string]: unknown };

declare const _private: {
  m(input: PrivateMInput): Promise<unknown>;
};

type ProtectedMInput = { [key: string]: unknown };

declare const _protected: {
  m(input: ProtectedMInput): Promise<unknown>;
};

type PublicMInput = { [key: string]: unknown };

declare const _public: {
  m(input: PublicMInput): Promise<unknown>;
};

type AwaitMInput = { [key: string]: unknown };

declare const _await: {
  m(input: AwaitMInput): Promise<unknown>;
};

type ArgumentsMInput = { [key: string]: unknown };

declare const _arguments: {
  m(input: ArgumentsMInput): Promise<unknown>;
};

type EvalMInput = { [key: string]: unknown };

declare const _eval: {
  m(input: EvalMInput): Promise<unknown>;
};

type UndefinedMInput = { [key: string]: unknown };

declare const _undefined: {
  m(input: UndefinedMInput): Promise<unknown>;
};

type NaNMInput = { [key: string]: unknown };

declare const _NaN: {
  m(input: NaNMInput): Promise<unknown>;
};

type InfinityMInput = { [key: string]: unknown };

declare const _Infinity: {
  m(input: InfinityMInput): Promise<unknown>;
};

type AsyncMInput = { [key: string]: unknown };

declare const _async: {
  m(input: AsyncMInput): Promise<unknown>;
};

type OfMInput = { [key: string]: unknown };

declare const of: {
  m(input: OfMInput): Promise<unknown>;
};

type GetMInput = { [key: string]: unknown };

declare const get: {
  m(input: GetMInput): Promise<unknown>;
};

type SetMInput = { [key: string]: unknown };

declare const set: {
  m(input: SetMInput): Promise<unknown>;
};

type AbstractMInput = { [key: string]: unknown };

declare const abstract: {
  m(input: AbstractMInput): Promise<unknown>;
};

type AccessorMInput = { [key: string]: unknown };

declare const accessor: {
  m(input: AccessorMInput): Promise<unknown>;
};

type AnyMInput = { [key: string]: unknown };

declare const any: {
  m(input: AnyMInput): Promise<unknown>;
};

type AsMInput = { [key: string]: unknown };

declare const as: {
  m(input: AsMInput): Promise<unknown>;
};

type AssertsMInput = { [key: string]: unknown };

declare const asserts: {
  m(input: AssertsMInput): Promise<unknown>;
};

type AssertMInput = { [key: string]: unknown };

declare const assert: {
  m(input: AssertMInput): Promise<unknown>;
};

type BigintMInput = { [key: string]: unknown };

declare const bigint: {
  m(input: BigintMInput): Promise<unknown>;
};

type BooleanMInput = { [key: string]: unknown };

declare const boolean: {
  m(input: BooleanMInput): Promise<unknown>;
};

type DeclareMInput = { [key: string]: unknown };

declare const declare: {
  m(input: DeclareMInput): Promise<unknown>;
};

type FromMInput = { [key: string]: unknown };

declare const from: {
  m(input: FromMInput): Promise<unknown>;
};

type GlobalMInput = { [key: string]: unknown };

declare const global: {
  m(input: GlobalMInput): Promise<unknown>;
};

type InferMInput = { [key: string]: unknown };

declare const infer: {
  m(input: InferMInput): Promise<unknown>;
};

type IsMInput = { [key: string]: unknown };

declare const is: {
  m(input: IsMInput): Promise<unknown>;
};

type KeyofMInput = { [key: string]: unknown };

declare const keyof: {
  m(input: KeyofMInput): Promise<unknown>;
};

type ModuleMInput = { [key: string]: unknown };

declare const module: {
  m(input: ModuleMInput): Promise<unknown>;
};

type NamespaceMInput = { [key: string]: unknown };

declare const namespace: {
  m(input: NamespaceMInput): Promise<unknown>;
};

type NeverMInput = { [key: string]: unknown };

declare const never: {
  m(input: NeverMInput): Promise<unknown>;
};

type NumberMInput = { [key: string]: unknown };

declare const number: {
  m(input: NumberMInput): Promise<unknown>;
};

type ObjectMInput = { [key: string]: unknown };

declare const object: {
  m(input: ObjectMInput): Promise<unknown>;
};

type OutMInput = { [key: string]: unknown };

declare const out: {
  m(input: OutMInput): Promise<unknown>;
};

type OverrideMInput = { [key: string]: unknown };

declare const override: {
  m(input: OverrideMInput): Promise<unknown>;
};

type ReadonlyMInput = { [key: string]: unknown };

declare const readonly: {
  m(input: ReadonlyMInput): Promise<unknown>;
};

type RequireMInput = { [key: string]: unknown };

declare const require: {
  m(input: RequireMInput): Promise<unknown>;
};

type SatisfiesMInput = { [key: string]: unknown };

declare const satisfies: {
  m(input: SatisfiesMInput): Promise<unknown>;
};

type StringMInput = { [key: string]: unknown };

declare const string: {
  m(input: StringMInput): Promise<unknown>;
};

type SymbolMInput = { [key: string]: unknown };

declare const symbol: {
  m(input: SymbolMInput): Promise<unknown>;
};

type TypeMInput = { [key: string]: unknown };

declare const type: {
  m(input: TypeMInput): Promise<unknown>;
};

type UniqueMInput = { [key: string]: unknown };

declare const unique: {
  m(input: UniqueMInput): Promise<unknown>;
};

type UnknownMInput = { [key: string]: unknown };

declare const unknown: {
  m(input: UnknownMInput): Promise<unknown>;
};

type UsingMInput = { [key: string]: unknown };

declare const using: {
  m(input: UsingMInput): Promise<unknown>;
};

type ConstructorMInput = { [key: string]: unknown };

declare const constructor: {
  m(input: ConstructorMInput): Promise<unknown>;
};

type PrototypeMInput = { [key: string]: unknown };

declare const prototype: {
  m(input: PrototypeMInput): Promise<unknown>;
};

type ProtoMInput = { [key: string]: unknown };

declare const ___proto__: {
  m(input: ProtoMInput): Promise<unknown>;
};

type ToStringMInput = { [key: string]: unknown };

declare const toString: {
  m(input: ToStringMInput): Promise<unknown>;
};

type ValueOfMInput = { [key: string]: unknown };

declare const valueOf: {
  m(input: ValueOfMInput): Promise<unknown>;
};

type HasOwnPropertyMInput = { [key: string]: unknown };

declare const hasOwnProperty: {
  m(input: HasOwnPropertyMInput): Promise<unknown>;
};

type ThenMInput = { [key: string]: unknown };

declare const then: {
  m(input: ThenMInput): Promise<unknown>;
};
