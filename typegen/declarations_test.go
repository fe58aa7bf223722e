package typegen

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// loadConnector reads a connector description from testdata/<name>.json.
func loadConnector(t *testing.T, name string) Connector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	// "definitions" holds the connector's shared definitions document.
	var c struct {
		Connector
		Definitions json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("decode %s.json: %v", name, err)
	}
	c.Connector.Definitions = definitions(t, c.Definitions)
	return c.Connector
}

// definitions decodes a shared definitions document as the catalog does
// (jsonref.Decode); absent raw gives nil.
func definitions(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	if isAbsent(raw) {
		return nil
	}
	v, err := jsonref.Decode(raw)
	if err != nil {
		t.Fatalf("definitions: %v", err)
	}
	return v
}

// golden compares got with testdata/<file>, or rewrites it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// goldenConnectors are the testdata connectors; their .ts outputs were
// checked with `tsc --strict --noEmit`.
var goldenConnectors = []string{"everything", "memory", "constructs", "named"}

func TestDeclarationsGolden(t *testing.T) {
	for _, name := range goldenConnectors {
		t.Run(name, func(t *testing.T) {
			golden(t, name+".ts", Declarations(loadConnector(t, name)))
		})
	}
}

// caseMethod is the method name of a schemaCases entry.
var caseMethod = strings.NewReplacer(" ", "_", "-", "_").Replace

// TestSchemaCasesGolden declares one method per schemaCases entry, with the
// schema as input and output, so that tsc can check every construct in
// declaration position.
func TestSchemaCasesGolden(t *testing.T) {
	c := Connector{Name: "cases"}
	for _, tc := range schemaCases {
		m := connectors.Tool{Name: caseMethod(tc.name)}
		if json.Valid([]byte(tc.schema)) {
			m.InputSchema = json.RawMessage(tc.schema)
			m.OutputSchema = json.RawMessage(tc.schema)
		}
		c.Methods = append(c.Methods, m)
	}
	golden(t, "cases.ts", Declarations(c))
}

// describeMethod is the declaration codemode.describe gives of one
// method (catalog's describeMethod): its connector with this method
// alone, and every type it refers to.
func describeMethod(connector string, defs any, m connectors.Tool) string {
	return Declarations(Connector{Name: connector, Definitions: defs, Methods: []connectors.Tool{m}})
}

func TestDescribeMethodGolden(t *testing.T) {
	for _, name := range goldenConnectors {
		t.Run(name, func(t *testing.T) {
			c := loadConnector(t, name)
			var parts []string
			for _, m := range c.Methods {
				parts = append(parts, describeMethod(c.Name, c.Definitions, m))
			}
			golden(t, name+".describe.txt", strings.Join(parts, "\n// ----\n\n"))
		})
	}
}

func TestDeclarationsDeterministic(t *testing.T) {
	c := loadConnector(t, "constructs")
	want := Declarations(c)
	for range 20 {
		if got := Declarations(c); got != want {
			t.Fatalf("Declarations is not deterministic:\n%s", cmp.Diff(want, got))
		}
	}
}

func TestDeclarationsCollidingMethods(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name    string
		methods []string
		want    []string // prefixes, in method order
	}{
		{"distinct", []string{"get_sum", "get_item"}, []string{"XGetSum", "XGetItem"}},
		{"snake and camel", []string{"get_item", "getItem"}, []string{"XGetItem", "XGetItem2"}},
		{"camel first", []string{"getItem", "get_item"}, []string{"XGetItem", "XGetItem2"}},
		{"suffix taken by a later plain name", []string{"get_item", "getItem", "get_item2"}, []string{"XGetItem", "XGetItem3", "XGetItem2"}},
		{"three ways", []string{"a_b", "aB", "a__b"}, []string{"XAB", "XAB2", "XAB3"}},
		{"standard library name", []string{"i_d_i"}, []string{"XIDI"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Connector{Name: "x"}
			for _, m := range tc.methods {
				c.Methods = append(c.Methods, connectors.Tool{Name: m, InputSchema: obj})
			}
			out := Declarations(c)
			var got []string
			for _, line := range strings.Split(out, "\n") {
				if name, ok := strings.CutPrefix(line, "type "); ok {
					got = append(got, strings.TrimSuffix(name[:strings.Index(name, " ")], "Input"))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("type prefixes mismatch (-want +got):\n%s\n%s", diff, out)
			}
		})
	}
}

func TestDeclarationsAvoidStandardLibraryNames(t *testing.T) {
	// "MIDIInput" is a DOM interface: the prefix must move to MIDI2.
	c := Connector{Name: "m", Methods: []connectors.Tool{{Name: "i_d_i"}}}
	out := Declarations(c)
	if !strings.Contains(out, "type MIDI2Input = ") {
		t.Errorf("want type MIDI2Input, got:\n%s", out)
	}
}

func TestGenerateUniqueAcrossConnectors(t *testing.T) {
	// a_b.c and a.b_c both give the prefix ABC.
	in := json.RawMessage(`{"type":"object","$defs":{"T":{"type":"string"}},"properties":{"t":{"$ref":"#/$defs/T"}}}`)
	out := Generate([]Connector{
		{Name: "a_b", Methods: []connectors.Tool{{Name: "c", InputSchema: in}}},
		{Name: "a", Methods: []connectors.Tool{{Name: "b_c", InputSchema: in}}},
		{Name: "aB", Methods: []connectors.Tool{{Name: "t", InputSchema: in}}},
	}).Text
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "type "); ok {
			name := rest[:strings.Index(rest, " ")]
			if seen[name] {
				t.Errorf("type %s declared twice:\n%s", name, out)
			}
			seen[name] = true
		}
	}
	want := []string{"ABCInput", "ABT", "ABC2Input", "AT", "ABTInput", "ABT2"}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("missing type %s in:\n%s", n, out)
		}
	}
	if got := strings.Count(out, "declare const "); got != 3 {
		t.Errorf("want 3 declare const, got %d", got)
	}
}

func TestDescribeMethod(t *testing.T) {
	tests := []struct {
		name      string
		connector string
		method    connectors.Tool
		want      string
	}{
		{
			"no schemas",
			"notes", connectors.Tool{Name: "list"},
			"type NotesListInput = { [key: string]: unknown };\n\ndeclare const notes: {\n  list(input: NotesListInput): Promise<unknown>;\n};\n",
		},
		{
			"approval and output",
			"files", connectors.Tool{Name: "write_file", Description: "Write a file.", RequiresApproval: true,
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)},
			"type FilesWriteFileInput = { path: string };\n\ntype FilesWriteFileOutput = { ok: boolean };\n\n" +
				"declare const files: {\n  /**\n   * Write a file.\n   * Requires approval.\n   */\n  write_file(input: FilesWriteFileInput): Promise<FilesWriteFileOutput>;\n};\n",
		},
		{
			"method name that is not an identifier",
			"x", connectors.Tool{Name: "a-b", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{}`)},
			"type XABInput = { [key: string]: never };\n\ntype XABOutput = unknown;\n\ndeclare const x: {\n  \"a-b\"(input: XABInput): Promise<XABOutput>;\n};\n",
		},
		{
			"invalid input schema",
			"x", connectors.Tool{Name: "m", InputSchema: json.RawMessage(`{`), OutputSchema: json.RawMessage(` null `)},
			"type XMInput = unknown;\n\ndeclare const x: {\n  m(input: XMInput): Promise<unknown>;\n};\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := describeMethod(tc.connector, nil, tc.method)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("describeMethod mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeclarationsDocs(t *testing.T) {
	c := Connector{
		Name:        "n",
		Description: "Notes */ store.",
		Methods: []connectors.Tool{
			{Name: "add", Description: "Adds.", RequiresApproval: true},
			{Name: "get"},
			{Name: "del", RequiresApproval: true},
		},
	}
	want := `type NAddInput = { [key: string]: unknown };

type NGetInput = { [key: string]: unknown };

type NDelInput = { [key: string]: unknown };

/** Notes *\/ store. */
declare const n: {
  /**
   * Adds.
   * Requires approval.
   */
  add(input: NAddInput): Promise<unknown>;
  get(input: NGetInput): Promise<unknown>;
  /** Requires approval. */
  del(input: NDelInput): Promise<unknown>;
};
`
	if diff := cmp.Diff(want, Declarations(c)); diff != "" {
		t.Errorf("Declarations mismatch (-want +got):\n%s", diff)
	}
}

func TestDeclarationsShareDefinitions(t *testing.T) {
	const components = `"components":{"schemas":{"Entry":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	tests := []struct {
		name   string
		inputs []string
		want   []string // type names declared, in order
	}{
		{
			"identical closed containers share",
			[]string{
				`{"type":"object","properties":{"e":{"$ref":"#/components/schemas/Entry"}},` + components + `}`,
				`{"type":"array","items":{"$ref":"#/components/schemas/Entry"},` + components + `}`,
			},
			[]string{"XAInput", "XEntry", "XBInput"},
		},
		{
			"different containers do not share",
			[]string{
				`{"$ref":"#/$defs/Entry","$defs":{"Entry":{"type":"string"}}}`,
				`{"$ref":"#/$defs/Entry","$defs":{"Entry":{"type":"number"}}}`,
			},
			[]string{"XAInput", "XEntry", "XBInput", "XEntry2"},
		},
		{
			"containers pointing outside do not share",
			[]string{
				`{"properties":{"p":{"type":"string"}},"$ref":"#/$defs/P","$defs":{"P":{"$ref":"#/properties/p"}}}`,
				`{"properties":{"p":{"type":"string"}},"$ref":"#/$defs/P","$defs":{"P":{"$ref":"#/properties/p"}}}`,
			},
			[]string{"XAInput", "XP", "XP2", "XBInput", "XP3", "XP4"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Connector{Name: "x"}
			for i, in := range tc.inputs {
				c.Methods = append(c.Methods, connectors.Tool{Name: string(rune('a' + i)), InputSchema: json.RawMessage(in)})
			}
			out := Declarations(c)
			var got []string
			for _, line := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(line, "type "); ok {
					got = append(got, rest[:strings.Index(rest, " ")])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("declared types mismatch (-want +got):\n%s\n%s", diff, out)
			}
		})
	}
}

// TestSharedDefinitions: references a method's schema cannot resolve
// itself resolve in the connector's definitions, each target one named
// type for all methods (recursive ones included); @deprecated is marked.
func TestSharedDefinitions(t *testing.T) {
	defs := definitions(t, json.RawMessage(`{"components":{"schemas":{
		"simple-user":{"type":"object","description":"A user.","properties":{"login":{"type":"string"},"manager":{"$ref":"#/components/schemas/simple-user"}},"required":["login"]},
		"issue":{"type":"object","properties":{"title":{"type":"string"},"user":{"anyOf":[{"$ref":"#/components/schemas/simple-user"},{"type":"null"}]}},"required":["title","user"]}
	}}}`))
	c := Connector{Name: "gh", Definitions: defs, Methods: []connectors.Tool{
		{Name: "issues_get", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			OutputSchema: json.RawMessage(`{"$ref":"#/components/schemas/issue"}`)},
		{Name: "users_list", Deprecated: true, InputSchema: json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"array","items":{"$ref":"#/components/schemas/simple-user"}}`)},
		{Name: "missing", OutputSchema: json.RawMessage(`{"$ref":"#/components/schemas/nope"}`)},
	}}
	want := `type GhIssuesGetInput = { n: number };

type GhIssuesGetOutput = GhIssue;

type GhIssue = { title: string; user: GhSimpleUser | null };

/** A user. */
type GhSimpleUser = { login: string; manager?: GhSimpleUser };

type GhUsersListInput = { [key: string]: unknown };

type GhUsersListOutput = GhSimpleUser[];

type GhMissingInput = { [key: string]: unknown };

type GhMissingOutput = unknown;

declare const gh: {
  issues_get(input: GhIssuesGetInput): Promise<GhIssuesGetOutput>;
  /** @deprecated */
  users_list(input: GhUsersListInput): Promise<GhUsersListOutput>;
  missing(input: GhMissingInput): Promise<GhMissingOutput>;
};
`
	if diff := cmp.Diff(want, Declarations(c)); diff != "" {
		t.Errorf("Declarations mismatch (-want +got):\n%s", diff)
	}
	one := describeMethod("gh", defs, c.Methods[1])
	if !strings.Contains(one, "type GhSimpleUser = {") || !strings.Contains(one, "  users_list(input: GhUsersListInput): Promise<GhUsersListOutput>;") {
		t.Errorf("describeMethod without the shared type:\n%s", one)
	}
	// Definitions that are not an object resolve nothing: the reference
	// is unknown, with its diagnostic.
	c = Connector{Name: "gh", Definitions: []any{json.Number("1")}, Methods: c.Methods[2:]}
	res := Generate([]Connector{c})
	if !strings.Contains(res.Text, "type GhMissingOutput = unknown;") || len(res.Diagnostics) != 1 || res.Diagnostics[0].Keyword != "$ref" {
		t.Errorf("definitions of an array:\n%s%v", res.Text, res.Diagnostics)
	}
}

// namespaceConnectors have dotted names: siblings under one global, a
// deeper namespace, a segment that needs sanitizing, and two names that
// clash with others (left out, with diagnostics).
func namespaceConnectors() []Connector {
	obj := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	return []Connector{
		{Name: "mcp.a", Description: "Server A.", Methods: []connectors.Tool{{Name: "get_sum", Description: "Adds.", InputSchema: obj}}},
		{Name: "notes", Methods: []connectors.Tool{{Name: "list"}}},
		{Name: "mcp.b", Methods: []connectors.Tool{{Name: "get_sum", InputSchema: obj, OutputSchema: obj, RequiresApproval: true}, {Name: "delete", InputSchema: obj}}},
		{Name: "github.pulls.reviews", Description: "Reviews.", Methods: []connectors.Tool{{Name: "list", InputSchema: obj}}},
		{Name: "github.issues", Methods: []connectors.Tool{{Name: "list_for_repo", InputSchema: obj}}},
		{Name: "my-org.tools", Methods: []connectors.Tool{{Name: "x"}}},
		{Name: "mcp", Methods: []connectors.Tool{{Name: "clash"}}},
		{Name: "github.pulls.reviews.comments", Methods: []connectors.Tool{{Name: "clash"}}},
		{Name: "mcp.a", Methods: []connectors.Tool{{Name: "clash"}}},
	}
}

func TestNamespacesGolden(t *testing.T) {
	res := Generate(namespaceConnectors())
	golden(t, "namespaces.ts", res.Text)
	var diags []string
	for _, d := range res.Diagnostics {
		diags = append(diags, d.String())
	}
	want := []string{
		`mcp: connector name "mcp" clashes with another connector's name or namespace (mcp); it is left out of the declarations`,
		`github.pulls.reviews.comments: connector name "github.pulls.reviews.comments" clashes with another connector's name or namespace (github.pulls.reviews); it is left out of the declarations`,
		`mcp.a: connector name "mcp.a" clashes with another connector's name or namespace (mcp.a); it is left out of the declarations`,
	}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics mismatch (-want +got):\n%s", diff)
	}
	if n := strings.Count(res.Text, "declare const mcp:"); n != 1 {
		t.Errorf("declare const mcp appears %d times:\n%s", n, res.Text)
	}
	for _, clash := range []string{"clash("} {
		if strings.Contains(res.Text, clash) {
			t.Errorf("a clashing connector was declared:\n%s", res.Text)
		}
	}
}

func TestDescribeMethodDotted(t *testing.T) {
	got := describeMethod("github.issues", nil, connectors.Tool{Name: "list_for_repo"})
	want := "type GithubIssuesListForRepoInput = { [key: string]: unknown };\n\n" +
		"declare const github: {\n  issues: {\n    list_for_repo(input: GithubIssuesListForRepoInput): Promise<unknown>;\n  };\n};\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("describeMethod mismatch (-want +got):\n%s", diff)
	}
	got = describeMethod("my-org.x", nil, connectors.Tool{Name: "a-b"})
	if !strings.Contains(got, "declare const my_org: {\n  x: {\n    \"a-b\"(input: ") {
		t.Errorf("describeMethod of a sanitized dotted name:\n%s", got)
	}
}

func TestGenerateReserved(t *testing.T) {
	// The codemode global's own types must not be declared again.
	c := Connector{Name: "codemode_search", Methods: []connectors.Tool{{Name: "m",
		InputSchema: json.RawMessage(`{"$defs":{"Result":{"type":"string"}},"$ref":"#/$defs/Result"}`)}}}
	res := Generate([]Connector{c}, []string{"CodemodeSearchResult"}...)
	if strings.Contains(res.Text, "type CodemodeSearchResult =") || !strings.Contains(res.Text, "type CodemodeSearchResult2 = string;") {
		t.Errorf("reserved name used:\n%s", res.Text)
	}
	if got := Declarations(c); !strings.Contains(got, "type CodemodeSearchResult = string;") {
		t.Errorf("without the option the plain name is free:\n%s", got)
	}
}

// TestSchemaCaseDiagnosticsGolden records the diagnostics the declarations
// report (Generate) of every schemaCases entry as a method's input, one
// line each.
func TestSchemaCaseDiagnosticsGolden(t *testing.T) {
	c := Connector{Name: "cases"}
	for _, tc := range schemaCases {
		c.Methods = append(c.Methods, connectors.Tool{Name: caseMethod(tc.name), InputSchema: json.RawMessage(tc.schema)})
	}
	var b strings.Builder
	for _, d := range Generate([]Connector{c}).Diagnostics {
		b.WriteString(d.String() + "\n")
	}
	golden(t, "cases.diagnostics.txt", b.String())
}

// TestDiagnosticsGolden records the diagnostics Generate gives for the
// golden connectors (named types: cycles are cut in declarations).
func TestDiagnosticsGolden(t *testing.T) {
	var cs []Connector
	for _, name := range goldenConnectors {
		cs = append(cs, loadConnector(t, name))
	}
	var b strings.Builder
	for _, d := range Generate(cs).Diagnostics {
		b.WriteString(d.String() + "\n")
	}
	golden(t, "golden.diagnostics.txt", b.String())
}

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Connector: "gh", Method: "get", Part: "input", Pointer: "/properties/a~1b", Keyword: "not", Message: "m"}, "gh.get (input #/properties/a~1b): m"},
		{Diagnostic{Connector: "gh", Part: "definitions", Pointer: "/components/schemas/x", Message: "m"}, "gh (definitions #/components/schemas/x): m"},
		{Diagnostic{Connector: "gh", Method: "get", Part: "output", Message: "m"}, "gh.get (output #): m"},
		{Diagnostic{Connector: "gh", Message: "m"}, "gh: m"},
		{Diagnostic{Pointer: "/anyOf/0", Message: "m"}, "(#/anyOf/0): m"},
		{Diagnostic{Message: "m"}, "m"},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestDiagnosticsPointAtTheKeyword(t *testing.T) {
	defs := definitions(t, json.RawMessage(`{"components":{"schemas":{"s":{"type":"object","properties":{"p":{"not":{}}}}}}}`))
	c := Connector{Name: "x", Definitions: defs, Methods: []connectors.Tool{
		{Name: "m", InputSchema: json.RawMessage(`{"type":"object","properties":{"a/b":{"type":"array","items":[{"type":"date"}]},"s":{"$ref":"#/components/schemas/s"}}}`),
			OutputSchema: json.RawMessage(`{"$defs":{"D":{"allOf":[{"$ref":"https://example.com/x.json"}]}},"$ref":"#/$defs/D"}`)},
		{Name: "bad", InputSchema: json.RawMessage(`{"type":`)},
	}}
	var got []string
	for _, d := range Generate([]Connector{c}).Diagnostics {
		got = append(got, d.Keyword+" | "+d.String())
	}
	want := []string{
		`type | x.m (input #/properties/a~1b/items/0): type "date" is not a JSON Schema type; typed unknown`,
		`not | x (definitions #/components/schemas/s/properties/p): not cannot be expressed in TypeScript; the type is wider than the schema`,
		`$ref | x.m (output #/$defs/D/allOf/0): $ref "https://example.com/x.json" is not local (only references within the document, #/…, are followed); typed unknown`,
		` | x.bad (input #): the schema is not valid JSON; typed unknown`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// jsAndTSWords are JavaScript's reserved words (ES2024, strict mode and
// module code included), TypeScript's contextual keywords and type names,
// and property names with a meaning of their own.
var jsAndTSWords = strings.Fields(`
	break case catch class const continue debugger default delete do else enum
	export extends false finally for function if import in instanceof new null
	return super switch this throw true try typeof var void while with yield
	let static implements interface package private protected public await
	arguments eval undefined NaN Infinity async of get set
	abstract accessor any as asserts assert bigint boolean declare from global
	infer is keyof module namespace never number object out override readonly
	require satisfies string symbol type unique unknown using
	constructor prototype __proto__ toString valueOf hasOwnProperty then
`)

// TestKeywordsGolden declares methods, properties and connectors named
// after every reserved word and contextual keyword: keys are quoted where
// needed and value names sanitized, so tsc accepts the file.
func TestKeywordsGolden(t *testing.T) {
	var props []string
	for _, w := range jsAndTSWords {
		props = append(props, `"`+w+`":{"type":"string"}`)
	}
	defs := definitions(t, json.RawMessage(`{"components":{"schemas":{"words":{"type":"object","properties":{`+strings.Join(props, ",")+`},"required":["class","type"]}}}}`))
	in := json.RawMessage(`{"$ref":"#/components/schemas/words"}`)
	var cs []Connector
	c := Connector{Name: "words", Definitions: defs}
	for _, w := range jsAndTSWords {
		c.Methods = append(c.Methods, connectors.Tool{Name: w, InputSchema: in})
	}
	cs = append(cs, c)
	for _, w := range jsAndTSWords {
		// As a global and as a namespace member.
		cs = append(cs, Connector{Name: w, Methods: []connectors.Tool{{Name: "m"}}}, Connector{Name: "ns." + w, Methods: []connectors.Tool{{Name: "m"}}})
	}
	res := Generate(cs)
	golden(t, "keywords.ts", res.Text)
	if len(res.Diagnostics) != 0 {
		t.Errorf("diagnostics: %v", res.Diagnostics)
	}
}

// A chain of types each made of the next, through aliases, unions or
// intersections (which TypeScript resolves eagerly), is cut at maxEager
// types with a diagnostic: tsc overflows its stack on one of some 800,
// and a check that crashes refuses every program. Shorter chains stay.
func TestLongEagerChainsAreCut(t *testing.T) {
	for _, def := range []string{`{"$ref":"#/$defs/a%d"}`, `{"anyOf":[{"$ref":"#/$defs/a%d"},{"const":"v"}]}`, `{"allOf":[{"$ref":"#/$defs/a%d"},{"required":["p"]}]}`} {
		for _, n := range []int{maxEager - 1, 1000} {
			var defs []string
			for i := range n {
				defs = append(defs, fmt.Sprintf(`"a%d":`+def, i, i+1))
			}
			defs = append(defs, fmt.Sprintf(`"a%d":{"type":"string"}`, n))
			schema := `{"type":"object","properties":{"x":{"$ref":"#/$defs/a0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
			res := Generate([]Connector{{Name: "c", Methods: []connectors.Tool{{Name: "m", InputSchema: json.RawMessage(schema)}}}})
			// The eager references of each type: the type names of its
			// one-line declaration outside braces.
			refs := map[string][]string{}
			for _, m := range regexp.MustCompile(`(?m)^type (\w+) = ([^{\n]*?)(?: & \{.*\})?;$`).FindAllStringSubmatch(res.Text, -1) {
				refs[m[1]] = regexp.MustCompile(`\bCA\d+\b`).FindAllString(m[2], -1)
			}
			var chain func(string) int
			chain = func(name string) int {
				h := 0
				for _, r := range refs[name] {
					h = max(h, chain(r))
				}
				return h + 1
			}
			cut := 0
			for _, d := range res.Diagnostics {
				if strings.Contains(d.Message, "chain of") {
					cut++
				}
			}
			switch got := chain("CA0"); {
			case n < maxEager && (got != n+1 || cut != 0):
				t.Errorf("%s ×%d: chain of %d types, %d cut; want %d, none cut", def, n, got, cut, n+1)
			case n >= maxEager && (got > maxEager || cut == 0):
				t.Errorf("%s ×%d: chain of %d types, %d cut; want at most %d, cut with a diagnostic", def, n, got, cut, maxEager)
			}
		}
	}
}

// TestPercentEncodedRefs: a reference written with percent escapes
// ("#/%24defs/X") means what the plain one does, as in validation
// (jsonref): it resolves in the connector's shared definitions, and both
// spellings name one type.
func TestPercentEncodedRefs(t *testing.T) {
	defs := definitions(t, json.RawMessage(`{"$defs":{"Entry":{"type":"string"}}}`))
	c := Connector{Name: "x", Definitions: defs, Methods: []connectors.Tool{
		{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"e":{"$ref":"#/%24defs/Entry"}},"required":["e"]}`)},
		{Name: "b", InputSchema: json.RawMessage(`{"type":"object","properties":{"e":{"$ref":"#/$defs/Entry"}},"required":["e"]}`)},
		// A method's own closed container, referred to both ways: shared
		// with an identical one written plainly.
		{Name: "c", InputSchema: json.RawMessage(`{"$ref":"#/%24defs/Own","$defs":{"Own":{"type":"number"}}}`)},
		{Name: "d", InputSchema: json.RawMessage(`{"$ref":"#/$defs/Own","$defs":{"Own":{"type":"number"}}}`)},
	}}
	res := Generate([]Connector{c})
	for _, want := range []string{
		"type XAInput = { e: XEntry };",
		"type XEntry = string;",
		"type XBInput = { e: XEntry };",
		"type XCInput = XOwn;",
		"type XOwn = number;",
		"type XDInput = XOwn;",
	} {
		if !strings.Contains(res.Text, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "XEntry2") || strings.Contains(res.Text, "XOwn2") {
		t.Errorf("one target declared twice:\n%s", res.Text)
	}
	if len(res.Diagnostics) != 0 {
		t.Errorf("diagnostics: %v", res.Diagnostics)
	}
}

// TestLongLiteralsAreBounded: a const or enum whose JSON is longer than
// maxLiteral is declared as the types of its values, with a comment and a
// diagnostic, in declarations and in Schema alike; shorter ones stay
// literal types.
func TestLongLiteralsAreBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	var enum strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&enum, `"v%d",`, i)
	}
	schema := `{"type":"object","properties":{
		"c":{"const":"` + long + `"},
		"e":{"enum":[` + enum.String() + `1]},
		"o":{"const":{"k":["` + long + `"]}},
		"short":{"enum":["a","b",null]}},"required":["c","e","o","short"]}`
	c := Connector{Name: "x", Methods: []connectors.Tool{{Name: "m", InputSchema: json.RawMessage(schema)}}}
	res := Generate([]Connector{c})
	want := "type XMInput = {\n" +
		"  c: string /* a const longer than 8192 bytes of JSON: its type only */;\n" +
		"  e: (string | number) /* an enum of 20001 values longer than 8192 bytes of JSON: their types only */;\n" +
		"  o: { [key: string]: unknown } /* a const longer than 8192 bytes of JSON: its type only */;\n" +
		`  short: "a" | "b" | null;` + "\n};\n"
	if !strings.HasPrefix(res.Text, want) {
		t.Errorf("declarations:\n%.2000s\nwant them to start with\n%s", res.Text, want)
	}
	if len(res.Text) > 2000 {
		t.Errorf("declarations of %d bytes", len(res.Text))
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.Keyword+" | "+d.String())
	}
	wantDiags := []string{
		"const | x.m (input #/properties/c): the const is longer than 8192 bytes of JSON; typed as its type only",
		"enum | x.m (input #/properties/e): the enum is longer than 8192 bytes of JSON; typed as its values' types only",
		"const | x.m (input #/properties/o): the const is longer than 8192 bytes of JSON; typed as its type only",
	}
	if diff := cmp.Diff(wantDiags, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if got := Schema(json.RawMessage(`{"const":"` + long + `"}`)); got != "string /* a const longer than 8192 bytes of JSON: its type only */" {
		t.Errorf("Schema: %.200s", got)
	}
}

// TestDiagnosticsEchoBounded: a diagnostic quotes what the schema wrote
// (a reference, a type name) cut to maxDocValue characters, not a
// document's megabyte.
func TestDiagnosticsEchoBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	c := Connector{Name: "x", Methods: []connectors.Tool{{Name: "m", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"r":{"$ref":"#/` + long + `"},"e":{"$ref":"https://` + long + `"},"t":{"type":"` + long + `"}}}`)}}}
	res := Generate([]Connector{c})
	if len(res.Diagnostics) != 3 {
		t.Fatalf("diagnostics: %d, want 3", len(res.Diagnostics))
	}
	for _, d := range res.Diagnostics {
		if len(d.Message) > 400 || !strings.Contains(d.Message, "xxx…") {
			t.Errorf("%s diagnostic of %d bytes: %.300s", d.Keyword, len(d.Message), d.Message)
		}
	}
}
