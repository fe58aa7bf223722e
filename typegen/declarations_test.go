package typegen

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// loadConnector reads a connector description from testdata/<name>.json.
func loadConnector(t *testing.T, name string) Connector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var c Connector
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("decode %s.json: %v", name, err)
	}
	return c
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
var goldenConnectors = []string{"everything", "memory", "constructs"}

func TestDeclarationsGolden(t *testing.T) {
	for _, name := range goldenConnectors {
		t.Run(name, func(t *testing.T) {
			golden(t, name+".ts", Declarations(loadConnector(t, name)))
		})
	}
}

// TestSchemaCasesGolden declares one method per schemaCases entry, with the
// schema as input and output, so that tsc can check every construct in
// declaration position.
func TestSchemaCasesGolden(t *testing.T) {
	c := Connector{Name: "cases"}
	for _, tc := range schemaCases {
		m := Method{Name: strings.NewReplacer(" ", "_", "-", "_").Replace(tc.name)}
		if json.Valid([]byte(tc.schema)) {
			m.Input = json.RawMessage(tc.schema)
			m.Output = json.RawMessage(tc.schema)
		}
		c.Methods = append(c.Methods, m)
	}
	golden(t, "cases.ts", Declarations(c))
}

func TestMethodDeclarationGolden(t *testing.T) {
	for _, name := range goldenConnectors {
		t.Run(name, func(t *testing.T) {
			c := loadConnector(t, name)
			var parts []string
			for _, m := range c.Methods {
				parts = append(parts, MethodDeclaration(c.Name, nil, m))
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
				c.Methods = append(c.Methods, Method{Name: m, Input: obj})
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
	c := Connector{Name: "m", Methods: []Method{{Name: "i_d_i"}}}
	out := Declarations(c)
	if !strings.Contains(out, "type MIDI2Input = ") {
		t.Errorf("want type MIDI2Input, got:\n%s", out)
	}
}

func TestDeclarationsAllUniqueAcrossConnectors(t *testing.T) {
	// a_b.c and a.b_c both give the prefix ABC.
	in := json.RawMessage(`{"type":"object","$defs":{"T":{"type":"string"}},"properties":{"t":{"$ref":"#/$defs/T"}}}`)
	out := DeclarationsAll([]Connector{
		{Name: "a_b", Methods: []Method{{Name: "c", Input: in}}},
		{Name: "a", Methods: []Method{{Name: "b_c", Input: in}}},
		{Name: "aB", Methods: []Method{{Name: "t", Input: in}}},
	})
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

func TestMethodDeclaration(t *testing.T) {
	tests := []struct {
		name      string
		connector string
		method    Method
		want      string
	}{
		{
			"no schemas",
			"notes", Method{Name: "list"},
			"type NotesListInput = { [key: string]: unknown };\n\nnotes.list(input: NotesListInput): Promise<unknown>;\n",
		},
		{
			"approval and output",
			"files", Method{Name: "write_file", Description: "Write a file.", RequiresApproval: true,
				Input:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
				Output: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)},
			"type FilesWriteFileInput = { path: string };\n\ntype FilesWriteFileOutput = { ok: boolean };\n\n" +
				"/**\n * Write a file.\n * Requires approval.\n */\nfiles.write_file(input: FilesWriteFileInput): Promise<FilesWriteFileOutput>;\n",
		},
		{
			"method name that is not an identifier",
			"x", Method{Name: "a-b", Input: json.RawMessage(`{"type":"object","additionalProperties":false}`), Output: json.RawMessage(`{}`)},
			"type XABInput = { [key: string]: never };\n\ntype XABOutput = unknown;\n\nx[\"a-b\"](input: XABInput): Promise<XABOutput>;\n",
		},
		{
			"invalid input schema",
			"x", Method{Name: "m", Input: json.RawMessage(`{`), Output: json.RawMessage(` null `)},
			"type XMInput = unknown;\n\nx.m(input: XMInput): Promise<unknown>;\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MethodDeclaration(tc.connector, nil, tc.method)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MethodDeclaration mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeclarationsDocs(t *testing.T) {
	c := Connector{
		Name:        "n",
		Description: "Notes */ store.",
		Methods: []Method{
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
				c.Methods = append(c.Methods, Method{Name: string(rune('a' + i)), Input: json.RawMessage(in)})
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
	defs, err := NewDefinitions(json.RawMessage(`{"components":{"schemas":{
		"simple-user":{"type":"object","description":"A user.","properties":{"login":{"type":"string"},"manager":{"$ref":"#/components/schemas/simple-user"}},"required":["login"]},
		"issue":{"type":"object","properties":{"title":{"type":"string"},"user":{"anyOf":[{"$ref":"#/components/schemas/simple-user"},{"type":"null"}]}},"required":["title","user"]}
	}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := Connector{Name: "gh", Definitions: defs, Methods: []Method{
		{Name: "issues_get", Input: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			Output: json.RawMessage(`{"$ref":"#/components/schemas/issue"}`)},
		{Name: "users_list", Deprecated: true, Input: json.RawMessage(`{"type":"object"}`),
			Output: json.RawMessage(`{"type":"array","items":{"$ref":"#/components/schemas/simple-user"}}`)},
		{Name: "missing", Output: json.RawMessage(`{"$ref":"#/components/schemas/nope"}`)},
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
	one := MethodDeclaration("gh", defs, c.Methods[1])
	if !strings.Contains(one, "type GhSimpleUser = {") || !strings.Contains(one, "gh.users_list(input: GhUsersListInput): Promise<GhUsersListOutput>;") {
		t.Errorf("MethodDeclaration without the shared type:\n%s", one)
	}
	if d, err := NewDefinitions(nil); d != nil || err != nil {
		t.Errorf("NewDefinitions(nil) = %v, %v", d, err)
	}
	if _, err := NewDefinitions(json.RawMessage(`[1]`)); err == nil {
		t.Error("NewDefinitions of an array: no error")
	}
}
