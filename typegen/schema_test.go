package typegen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// expectTS checks the type expression Schema gives for schema.
func expectTS(t *testing.T, schema, want string) {
	t.Helper()
	if diff := cmp.Diff(want, Schema(json.RawMessage(schema))); diff != "" {
		t.Errorf("Schema(%s) mismatch (-want +got):\n%s", schema, diff)
	}
}

// schemaCases are shared with the fuzz seed corpus.
var schemaCases = []struct {
	name, schema, want string
}{
	// trivial and invalid schemas
	{"empty object", `{}`, `unknown`},
	{"true", `true`, `unknown`},
	{"false", `false`, `never`},
	{"no bytes", ``, `unknown`},
	{"invalid JSON", `{"type":`, `unknown`},
	{"trailing data", `{"type":"string"} x`, `unknown`},
	{"not a schema", `42`, `unknown`},
	{"null", `null`, `unknown`},
	{"unknown type name", `{"type":"date"}`, `unknown`},
	{"draft 3 any", `{"type":"any"}`, `unknown`},

	// type
	{"string", `{"type":"string"}`, `string`},
	{"number", `{"type":"number"}`, `number`},
	{"integer", `{"type":"integer"}`, `number`},
	{"boolean", `{"type":"boolean"}`, `boolean`},
	{"null type", `{"type":"null"}`, `null`},
	{"type array", `{"type":["string","null"]}`, `string | null`},
	{"type array dedup", `{"type":["integer","number"]}`, `number`},
	{"type array with object", `{"type":["object","null"],"properties":{"a":{"type":"string"}},"required":["a"]}`, `{ a: string } | null`},
	{"empty type array", `{"type":[]}`, `unknown`},

	// enum and const
	{"enum strings", `{"type":"string","enum":["a","b\"c","</script>","*/","\u2028"]}`, `"a" | "b\"c" | "</script>" | "*/" | "\u2028"`},
	{"enum mixed", `{"enum":[1,-2.5,1e3,true,false,null,"x"]}`, `1 | -2.5 | 1e3 | true | false | null | "x"`},
	{"enum duplicates", `{"enum":["a","a"]}`, `"a"`},
	{"enum empty", `{"enum":[]}`, `never`},
	{"enum object and array", `{"enum":[{"b-c":[1],"a":"x"},[]]}`, `{ a: "x"; "b-c": [1] } | []`},
	{"enum not a list", `{"type":"string","enum":"a"}`, `string`},
	{"const string", `{"const":"fixed"}`, `"fixed"`},
	{"const wins over type", `{"type":"string","const":"v1"}`, `"v1"`},
	{"const null", `{"const":null}`, `null`},
	{"const empty object", `{"const":{}}`, `{}`},

	// combinators
	{"anyOf", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `string | number`},
	{"oneOf", `{"oneOf":[{"type":"boolean"},{"type":"null"}]}`, `boolean | null`},
	{"anyOf with unknown member", `{"anyOf":[{"type":"string"},{}]}`, `unknown`},
	{"anyOf with never member", `{"anyOf":[{"type":"string"},false]}`, `string`},
	{"anyOf constraining a type", `{"type":"string","anyOf":[{"format":"date"},{"format":"uri"}]}`, `string`},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}}}]}`, `{ a: string } & { b?: number }`},
	{"allOf of union", `{"allOf":[{"anyOf":[{"type":"string"},{"type":"number"}]},{"type":"string"}]}`, `(string | number) & string`},
	{"allOf with false", `{"allOf":[{"type":"string"},false]}`, `never`},
	{"union of intersections", `{"anyOf":[{"allOf":[{"type":"string"},{"const":"a"}]},{"type":"number"}]}`, `(string & "a") | number`},
	{"pydantic optional", `{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Name"}`, `string | null`},

	// nullable
	{"nullable", `{"type":"string","nullable":true}`, `string | null`},
	{"nullable false", `{"type":"string","nullable":false}`, `string`},
	{"x-nullable", `{"type":"integer","x-nullable":true}`, `number | null`},
	{"nullable enum", `{"type":"string","enum":["a",null],"nullable":true}`, `"a" | null`},

	// arrays
	{"array of strings", `{"type":"array","items":{"type":"string"}}`, `string[]`},
	{"array without items", `{"type":"array"}`, `unknown[]`},
	{"array of union", `{"type":"array","items":{"type":["string","number"]}}`, `(string | number)[]`},
	{"nested arrays", `{"type":"array","items":{"type":"array","items":{"type":"boolean"}}}`, `boolean[][]`},
	{"items false", `{"type":"array","items":false}`, `[]`},
	{"items inferred", `{"items":{"type":"number"}}`, `number[]`},
	{"prefixItems closed", `{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`, `[string, number]`},
	{"prefixItems rest", `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"}}`, `[string, ...number[]]`},
	{"prefixItems open", `{"type":"array","prefixItems":[{"type":"string"}]}`, `[string, ...unknown[]]`},
	{"draft 4 tuple", `{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`, `[string, number]`},
	{"draft 4 tuple rest", `{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":["string","null"]}}`, `[string, ...(string | null)[]]`},

	// objects
	{"object", `{"type":"object"}`, `{ [key: string]: unknown }`},
	{"required and optional", `{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"string"}},"required":["a"]}`, `{ a: string; b?: number }`},
	{"required without property", `{"type":"object","required":["id"]}`, `{ id: unknown }`},
	{"object inferred from properties", `{"properties":{"x":{"type":"number"}}}`, `{ x?: number }`},
	{"draft 3 required", `{"type":"object","properties":{"a":{"type":"string","required":true}}}`, `{ a: string }`},
	{"quoted keys", `{"type":"object","properties":{"foo-bar":{"type":"string"},"1st":{"type":"string"},"":{"type":"string"},"naïve":{"type":"string"},"a b":{"type":"string"},"ok_$1":{"type":"string"}},"required":["foo-bar"]}`,
		"{\n  \"\"?: string;\n  \"1st\"?: string;\n  \"a b\"?: string;\n  \"foo-bar\": string;\n  \"naïve\"?: string;\n  ok_$1?: string;\n}"},
	{"reserved keys quoted", `{"type":"object","properties":{"default":{"type":"string"},"class":{"type":"number"}},"required":["class"]}`, `{ "class": number; "default"?: string }`},
	{"quote in key", `{"type":"object","properties":{"say \"hi\"":{"type":"string"}},"required":["say \"hi\""]}`, `{ "say \"hi\"": string }`},
	{"additionalProperties true", `{"type":"object","additionalProperties":true}`, `{ [key: string]: unknown }`},
	{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"number"}}`, `{ [key: string]: number }`},
	{"additionalProperties false", `{"type":"object","additionalProperties":false}`, `{ [key: string]: never }`},
	{"additionalProperties false with properties", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, `{ a: string }`},
	{"index widened for properties", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":{"type":"number"}}`, `{ a: string; [key: string]: number | string }`},
	{"index widened for optional", `{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":{"type":"number"}}`, `{ a?: number; [key: string]: number | undefined }`},
	{"index unknown with properties", `{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":true}`, `{ a?: number; [key: string]: unknown }`},
	{"index unknown for object properties", `{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}}}},"additionalProperties":{"type":"string"}}`, `{ p?: { x?: number }; [key: string]: unknown }`},
	{"patternProperties", `{"type":"object","patternProperties":{"^x-":{"type":"string"},"^n-":{"type":"number"}}}`, `{ [key: string]: number | string }`},
	{"nested object", `{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"required":["p"]}`, `{ p: { x: number } }`},
	{"long object breaks lines", `{"type":"object","properties":{"alpha_value":{"type":"string"},"beta_value":{"type":"string"},"gamma_value":{"type":"string"},"delta":{"type":"number"}}}`,
		"{\n  alpha_value?: string;\n  beta_value?: string;\n  delta?: number;\n  gamma_value?: string;\n}"},
	{"object in union stays multi-line", `{"anyOf":[{"type":"object","properties":{"a":{"type":"string","description":"A."}}},{"type":"null"}]}`,
		"{\n  /** A. */\n  a?: string;\n} | null"},

	// JSDoc
	{"description", `{"type":"object","properties":{"a":{"type":"string","description":"The A."}}}`, "{\n  /** The A. */\n  a?: string;\n}"},
	{"description escaped", `{"type":"object","properties":{"a":{"type":"string","description":"ends */ here"}}}`, "{\n  /** ends *\\/ here */\n  a?: string;\n}"},
	{"multi-line description", `{"type":"object","properties":{"a":{"type":"string","description":"\n\nFirst line.  \r\n\r\nSecond\u2028third\u0007.\n"}}}`,
		"{\n  /**\n   * First line.\n   *\n   * Second\n   * third .\n   */\n  a?: string;\n}"},
	{"doc tags", `{"type":"object","properties":{"when":{"type":"string","format":"date-time","default":"now */","examples":["2024-01-01T00:00:00Z",{"a":1},1,2],"deprecated":true}},"required":["when"]}`,
		"{\n  /**\n   * @format date-time\n   * @default \"now *\\/\"\n   * @example \"2024-01-01T00:00:00Z\"\n   * @example {\"a\":1}\n   * @example 1\n   * @deprecated\n   */\n  when: string;\n}"},
	{"OpenAPI example", `{"type":"object","properties":{"n":{"type":"integer","example":5}}}`, "{\n  /** @example 5 */\n  n?: number;\n}"},
	{"long default truncated", `{"type":"object","properties":{"s":{"type":"string","default":"` + strings.Repeat("x", 200) + `"}}}`,
		"{\n  /** @default \"" + strings.Repeat("x", 119) + "… */\n  s?: string;\n}"},
	{"title is not documentation", `{"type":"object","properties":{"a":{"type":"string","title":"A"}}}`, `{ a?: string }`},

	// $ref (inlined by Schema)
	{"ref $defs", `{"$defs":{"Pos":{"type":"number"}},"$ref":"#/$defs/Pos"}`, `number`},
	{"ref definitions", `{"definitions":{"Name":{"type":"string"}},"type":"object","properties":{"n":{"$ref":"#/definitions/Name"}}}`, `{ n?: string }`},
	{"ref components", `{"components":{"schemas":{"Id":{"type":"integer"}}},"type":"array","items":{"$ref":"#/components/schemas/Id"}}`, `number[]`},
	{"ref with nullable sibling", `{"$defs":{"A":{"type":"string"}},"$ref":"#/$defs/A","nullable":true}`, `string | null`},
	{"ref with constraints", `{"$defs":{"A":{"type":"object","properties":{"a":{"type":"string"}}}},"$ref":"#/$defs/A","required":["a"]}`, `{ a?: string } & { a: unknown }`},
	{"ref escaped pointer", `{"$defs":{"a/b":{"type":"string"},"c~d":{"type":"number"}},"anyOf":[{"$ref":"#/$defs/a~1b"},{"$ref":"#/$defs/c~0d"}]}`, `string | number`},
	{"ref percent-encoded", `{"$defs":{"a b":{"type":"boolean"}},"$ref":"#/$defs/a%20b"}`, `boolean`},
	{"ref into array", `{"anyOf":[{"type":"string"},{"$ref":"#/anyOf/0"}]}`, `string`},
	{"ref bad array index", `{"anyOf":[{"type":"string"},{"$ref":"#/anyOf/01"}]}`, `unknown`},
	{"ref unresolvable", `{"$ref":"#/$defs/Missing"}`, `unknown`},
	{"ref remote", `{"$ref":"https://example.com/schema.json"}`, `unknown`},
	{"ref not a string", `{"$ref":7,"type":"string"}`, `string`},
	{"ref recursive", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`, `{ children?: unknown[]; name: string }`},
	{"ref mutually recursive", `{"$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"array","items":{"$ref":"#/$defs/A"}}},"$ref":"#/$defs/A"}`, `{ b?: unknown[] }`},
	{"ref self alias", `{"$defs":{"A":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`, `unknown`},
	{"ref anchor", `{"$defs":{"A":{"$anchor":"a","type":"string"}},"$ref":"#a"}`, `unknown`},

	// unsupported keywords: ignored (the type is wider), with diagnostics
	{"not", `{"type":"string","not":{"const":"x"}}`, `string`},
	{"if then else", `{"type":"object","properties":{"a":{"type":"string"}},"if":{"required":["a"]},"then":{"required":["b"]},"else":true}`, `{ a?: string }`},
	{"dependent schemas", `{"type":"object","properties":{"a":{"type":"number"}},"dependentSchemas":{"a":{"required":["b"]}},"dependentRequired":{"a":["c"]},"dependencies":{"a":["d"]}}`, `{ a?: number }`},
	{"unevaluated", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"number"},"unevaluatedItems":false,"contains":{"const":1}}},"unevaluatedProperties":false,"propertyNames":{"pattern":"^a"}}`, `{ a?: number[] }`},
	{"unevaluated true", `{"type":"object","unevaluatedProperties":true}`, `{ [key: string]: unknown }`},
	{"dynamic refs", `{"anyOf":[{"$dynamicRef":"#node"},{"$recursiveRef":"#"},{"type":"string"}]}`, `unknown`},
	{"depth limit", strings.Repeat(`{"type":"array","items":`, 70) + `{"type":"string"}` + strings.Repeat(`}`, 70), "unknown" + strings.Repeat("[]", maxDepth+1)},
	{"validation keywords are not diagnostics", `{"type":"string","minLength":1,"maxLength":9,"pattern":"^a","title":"T","readOnly":true,"$comment":"c","x-foo":1}`, `string`},
}

func TestSchema(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			expectTS(t, tc.schema, tc.want)
		})
	}
}

func TestSchemaDepthLimit(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 200) + `{"type":"string"}` + strings.Repeat(`}`, 200)
	want := "unknown" + strings.Repeat("[]", maxDepth+1)
	expectTS(t, deep, want)
}

func TestSchemaNestedIndexSignaturesStayLinear(t *testing.T) {
	// Widening every level's index signature with its object-typed property
	// would double the output per level.
	const levels = 60
	s := strings.Repeat(`{"properties":{"a":`, levels) + `{"type":"string"}` +
		strings.Repeat(`},"additionalProperties":{"type":"number"}}`, levels)
	got := Schema(json.RawMessage(s))
	if n := strings.Count(got, "[key: string]"); n != levels {
		t.Errorf("got %d index signatures, want %d", n, levels)
	}
	if len(got) > 200*levels*levels {
		t.Errorf("output of %d bytes for %d levels is not linear", len(got), levels)
	}
}

func TestSchemaRefBlowupIsBounded(t *testing.T) {
	// Each definition uses the next one twice: inlining doubles per level.
	var defs []string
	for i := range 40 {
		defs = append(defs, `"D`+itoa(i)+`":{"type":"array","prefixItems":[{"$ref":"#/$defs/D`+itoa(i+1)+`"},{"$ref":"#/$defs/D`+itoa(i+1)+`"}],"items":false}`)
	}
	defs = append(defs, `"D40":{"type":"string"}`)
	schema := `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/D0"}`
	got := Schema(json.RawMessage(schema))
	if n := strings.Count(got, "string"); n > maxNodes {
		t.Fatalf("Schema expanded %d leaves, want at most %d", n, maxNodes)
	}
	if !strings.Contains(got, "unknown") {
		t.Errorf("Schema of an exponential schema should give up with unknown somewhere")
	}
}

func TestSchemaDeterministic(t *testing.T) {
	// The same schema with keys in a different order gives the same output,
	// and repeated runs (random map iteration) agree.
	a := `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"m":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["m","z"],"patternProperties":{"^b":{"type":"boolean"},"^a":{"type":"integer"}}}`
	b := `{"patternProperties":{"^a":{"type":"integer"},"^b":{"type":"boolean"}},"required":["z","m"],"properties":{"m":{"anyOf":[{"type":"string"},{"type":"null"}]},"a":{"type":"number"},"z":{"type":"string"}},"type":"object"}`
	want := Schema(json.RawMessage(a))
	for range 20 {
		for _, s := range []string{a, b} {
			if got := Schema(json.RawMessage(s)); got != want {
				t.Fatalf("Schema is not deterministic:\n%s\nvs\n%s", got, want)
			}
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestSchemaEnumBlowupIsBounded checks that an enum's values count
// against the node budget: eight kilobytes that inline an enum of 1,000
// values 1,024 times made a type of nine megabytes.
func TestSchemaEnumBlowupIsBounded(t *testing.T) {
	const levels, values = 10, 1000
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/a0","$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"a%d":{"properties":{"x":{"$ref":"#/$defs/a%d"},"y":{"$ref":"#/$defs/a%d"}}},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"a%d":{"enum":[`, levels)
	for i := range values {
		fmt.Fprintf(&b, `%q,`, "v"+itoa(i))
	}
	b.WriteString(`"last"]}}}`)
	got := Schema(json.RawMessage(b.String()))
	if n := strings.Count(got, `"v`); n > maxNodes {
		t.Errorf("Schema expanded %d enum values, want at most %d", n, maxNodes)
	}
	if !strings.Contains(got, "unknown") {
		t.Errorf("Schema of an exponential schema should give up with unknown somewhere")
	}
}
