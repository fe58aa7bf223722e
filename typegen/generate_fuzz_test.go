package typegen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// FuzzGeneratedSchemas builds JSON Schemas from the fuzzer's bytes, using
// every keyword typegen reads (and some it reports), nasty names and
// texts, then checks that the declarations of a connector using them as
// input, output and shared definitions parse as TypeScript (esbuild's
// parser), declare every type once and refer only to declared types.
// Whether tsc accepts them is checked on the golden files by the
// end-to-end suite.
func FuzzGeneratedSchemas(f *testing.F) {
	for _, seed := range []string{"", "\x00", "\x03\x05\x01\x02\x0b\x0c", "\x0e\x0f\x10\x11\x12\x13\x14\x15", strings.Repeat("\x03\x07\x09", 20), strings.Repeat("\x0b\x02", 40), "\xff\xfe\xfd\xfc\xfb\xfa"} {
		f.Add([]byte(seed))
	}
	for i := range 64 {
		f.Add([]byte(fmt.Sprintf("%c%c%c%c%c%c%c%c", i, i*7, i*13, i*31, i*3, i*5, i*11, i*17)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &schemaGen{b: data}
		in, out := g.document(), g.document()
		shared := map[string]any{"components": map[string]any{"schemas": g.defs("S")}}
		defs := definitions(t, mustJSON(t, shared))
		names := []string{"f", "ns.a", "ns.b", "x-y.z", "ns.c.d"}
		var cs []Connector
		for i := 0; i <= g.pick(len(names)); i++ {
			c := Connector{Name: names[i], Description: g.text(), Definitions: defs}
			for j := 0; j <= g.pick(3); j++ {
				c.Methods = append(c.Methods, connectors.Tool{Name: g.key(), Description: g.text(), InputSchema: mustJSON(t, in), OutputSchema: mustJSON(t, out), RequiresApproval: g.pick(2) == 0, Deprecated: g.pick(2) == 0})
			}
			cs = append(cs, c)
		}
		res := Generate(cs, []string{"FInput", "NsAInput"}...)
		if problem := checkDeclarations(res.Text); problem != "" {
			t.Fatalf("%s\nschemas %s / %s\n%s", problem, mustJSON(t, in), mustJSON(t, out), res.Text)
		}
		for _, s := range []any{in, out} {
			raw := mustJSON(t, s)
			typ := Schema(raw)
			if problem := checkDeclarations("type T = " + typ + ";\n"); problem != "" {
				t.Fatalf("Schema(%s): %s\n%s", raw, problem, typ)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkDeclarations reports the first problem of generated TypeScript, or
// "": unbalanced text, a syntax error, a type declared twice, a
// reference to an undeclared type, a global declared twice.
func checkDeclarations(ts string) string {
	if p := checkBalanced(ts); p != "" {
		return p
	}
	r := api.Transform(ts, api.TransformOptions{Loader: api.LoaderTS})
	if len(r.Errors) > 0 {
		e := r.Errors[0]
		loc := ""
		if e.Location != nil {
			loc = fmt.Sprintf(" at %d:%d (%q)", e.Location.Line, e.Location.Column, e.Location.LineText)
		}
		return "esbuild: " + e.Text + loc
	}
	declared := map[string]bool{}
	for _, m := range typeDecl.FindAllStringSubmatch(ts, -1) {
		if declared[m[1]] {
			return "type " + m[1] + " declared twice"
		}
		declared[m[1]] = true
	}
	globals := map[string]bool{}
	for _, m := range constDecl.FindAllStringSubmatch(ts, -1) {
		if globals[m[1]] {
			return "global " + m[1] + " declared twice"
		}
		globals[m[1]] = true
	}
	for _, name := range typeRefs(ts) {
		if !declared[name] && name != "Promise" {
			return "type " + name + " is used but not declared"
		}
	}
	return ""
}

var (
	typeDecl  = regexp.MustCompile(`(?m)^type (\w+) = `)
	constDecl = regexp.MustCompile(`(?m)^declare const ([\w$]+): `)
)

// typeRefs returns the capitalised identifiers of ts that stand for types:
// outside string literals and comments, and not a property or method name
// (followed by ':', '?' or '(').
func typeRefs(ts string) []string {
	var out []string
	for i := 0; i < len(ts); i++ {
		c := ts[i]
		switch {
		case c == '"':
			for i++; i < len(ts) && ts[i] != '"'; i++ {
				if ts[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(ts) && ts[i+1] == '*':
			end := strings.Index(ts[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 3
		case '0' <= c && c <= '9': // a number literal, exponent included
			for i+1 < len(ts) && (isIdentStart(ts[i+1]) || '0' <= ts[i+1] && ts[i+1] <= '9' || ts[i+1] == '.' ||
				(ts[i+1] == '-' || ts[i+1] == '+') && (ts[i] == 'e' || ts[i] == 'E')) {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(ts) && (isIdentStart(ts[j]) || '0' <= ts[j] && ts[j] <= '9') {
				j++
			}
			word := ts[i:j]
			k := j
			for k < len(ts) && ts[k] == ' ' {
				k++
			}
			key := k < len(ts) && (ts[k] == ':' || ts[k] == '?' || ts[k] == '(')
			prevDot := i > 0 && ts[i-1] == '.'
			if 'A' <= word[0] && word[0] <= 'Z' && !key && !prevDot && !strings.HasSuffix(strings.TrimRight(ts[:i], " "), "type") {
				out = append(out, word)
			}
			i = j - 1
		}
	}
	return out
}

func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$'
}

func TestCheckDeclarations(t *testing.T) {
	tests := []struct{ ts, want string }{
		{"type A = { b: B; C?: string; D(x: A): Promise<A> };\ntype B = A[];\n", ""},
		{"type A = string;\ntype A = number;\n", "type A declared twice"},
		{"type A = B;\n", "type B is used but not declared"},
		{"type A = { a: };\n", `esbuild: Unexpected "}" at 1:14 ("type A = { a: };")`},
		{"declare const x: {};\ndeclare const x: {};\n", "global x declared twice"},
		{"/** See B. */\ntype A = \"B\";\n", ""},
		{"type A = 1E-7 | 1e3 | 0x1F;\n", ""},
	}
	for _, tc := range tests {
		if got := checkDeclarations(tc.ts); got != tc.want {
			t.Errorf("checkDeclarations(%q) = %q, want %q", tc.ts, got, tc.want)
		}
	}
}

// schemaGen draws schemas from bytes; past the end every draw is 0.
type schemaGen struct {
	b     []byte
	i     int
	nodes int
}

func (g *schemaGen) pick(n int) int {
	if g.i >= len(g.b) || n <= 1 {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return int(c) % n
}

// nastyKeys are property, method and definition names.
var nastyKeys = []string{
	"id", "name", "class", "default", "type", "constructor", "__proto__", "then",
	"foo-bar", "1st", "", "a b", "naïve", "*/", `say "hi"`, "a/b", "~0", "x\u2028y",
	"Promise", "Array", "Record", "FileList", "$ref", "get_item", "getItem", "GetItem",
}

// nastyTexts are descriptions and string values.
var nastyTexts = []string{
	"", "plain", "ends */ here", "/* open", "line\nbreak\r\nand\u2028more", "\x00\x07ctl", `"quoted" \ back`,
	"</script>", "@default 3", strings.Repeat("long ", 60), "\xff invalid utf-8",
}

func (g *schemaGen) key() string  { return nastyKeys[g.pick(len(nastyKeys))] }
func (g *schemaGen) text() string { return nastyTexts[g.pick(len(nastyTexts))] }

// document is a root schema with $defs and definitions.
func (g *schemaGen) document() any {
	s, ok := g.schema(0).(map[string]any)
	if !ok {
		s = map[string]any{"allOf": []any{g.schema(0)}}
	}
	s["$defs"] = g.defs("D")
	s["definitions"] = g.defs("E")
	return s
}

func (g *schemaGen) defs(prefix string) map[string]any {
	m := map[string]any{}
	for i := 0; i <= g.pick(3); i++ {
		m[prefix+fmt.Sprint(i)] = g.schema(1)
	}
	if g.pick(4) == 0 {
		m[g.key()] = g.schema(1)
	}
	return m
}

var refTargets = []string{
	"#", "#/$defs/D0", "#/$defs/D1", "#/definitions/E0", "#/components/schemas/S0", "#/components/schemas/S1",
	"#/$defs/Missing", "#/properties/id", "#/anyOf/0", "https://example.com/s.json", "#anchor", "#/$defs/a~1b", "#/$defs/a%20b",
}

var typeNames = []string{"string", "number", "integer", "boolean", "null", "object", "array", "date", "any"}

func (g *schemaGen) schema(depth int) any {
	g.nodes++
	if depth > 6 || g.nodes > 200 {
		return map[string]any{"type": typeNames[g.pick(5)]}
	}
	var s map[string]any
	switch g.pick(16) {
	case 0:
		return g.pick(2) == 0
	case 1:
		s = map[string]any{"type": typeNames[g.pick(len(typeNames))]}
	case 2, 3:
		props := map[string]any{}
		var req []any
		for range g.pick(4) {
			k := g.key()
			props[k] = g.schema(depth + 1)
			if g.pick(2) == 0 {
				req = append(req, k)
			}
		}
		if g.pick(4) == 0 {
			req = append(req, g.key())
		}
		s = map[string]any{"properties": props, "required": req}
		if g.pick(2) == 0 {
			s["type"] = "object"
		}
		switch g.pick(4) {
		case 1:
			s["additionalProperties"] = g.pick(2) == 0
		case 2:
			s["additionalProperties"] = g.schema(depth + 1)
		}
		if g.pick(3) == 0 {
			s["patternProperties"] = map[string]any{"^x-": g.schema(depth + 1), "^y": g.schema(depth + 1)}
		}
	case 4:
		s = map[string]any{"type": "array", "items": g.schema(depth + 1)}
	case 5:
		s = map[string]any{"type": "array", "prefixItems": g.list(depth)}
		switch g.pick(3) {
		case 1:
			s["items"] = false
		case 2:
			s["items"] = g.schema(depth + 1)
		}
	case 6:
		s = map[string]any{"items": g.list(depth)}
		if g.pick(2) == 0 {
			s["additionalItems"] = g.schema(depth + 1)
		} else {
			s["additionalItems"] = false
		}
	case 7:
		var vs []any
		for range g.pick(4) {
			vs = append(vs, g.value(0))
		}
		s = map[string]any{"enum": vs}
	case 8:
		s = map[string]any{"const": g.value(0)}
	case 9, 10:
		s = map[string]any{[]string{"anyOf", "oneOf", "allOf"}[g.pick(3)]: g.list(depth)}
	case 11, 12:
		s = map[string]any{"$ref": refTargets[g.pick(len(refTargets))]}
	case 13:
		var ts []any
		for range 1 + g.pick(3) {
			ts = append(ts, typeNames[g.pick(len(typeNames))])
		}
		s = map[string]any{"type": ts, "properties": map[string]any{g.key(): g.schema(depth + 1)}, "items": g.schema(depth + 1)}
	case 14:
		s = map[string]any{[]string{"not", "if", "dependentSchemas", "propertyNames", "contains", "unevaluatedProperties", "$dynamicRef"}[g.pick(7)]: g.schema(depth + 1), "type": "string"}
	default:
		s = map[string]any{"type": "object", "additionalProperties": g.schema(depth + 1)}
	}
	// Annotations on any schema object.
	if g.pick(3) == 0 {
		s["description"] = g.text()
	}
	if g.pick(4) == 0 {
		s["nullable"] = true
	}
	switch g.pick(8) {
	case 1:
		s["format"] = g.text()
	case 2:
		s["default"] = g.value(0)
	case 3:
		s["examples"] = []any{g.value(0), g.value(0)}
	case 4:
		s["example"] = g.value(0)
	case 5:
		s["deprecated"] = true
	case 6:
		s["$ref"] = refTargets[g.pick(len(refTargets))]
	}
	return s
}

func (g *schemaGen) list(depth int) []any {
	var out []any
	for range g.pick(4) {
		out = append(out, g.schema(depth+1))
	}
	return out
}

// value is a JSON value for enum, const, default and examples.
func (g *schemaGen) value(depth int) any {
	switch g.pick(8) {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 0
	case 2:
		return json.Number([]string{"0", "-0", "1e3", "-2.5", "12345678901234567890", "1E-7"}[g.pick(6)])
	case 3, 4:
		return g.text()
	case 5:
		if depth < 3 {
			return []any{g.value(depth + 1), g.value(depth + 1)}
		}
	case 6:
		if depth < 3 {
			return map[string]any{g.key(): g.value(depth + 1)}
		}
	}
	return g.key()
}
