package catalog

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// The codemode global's type names are never declared again by a
// connector, even one whose definitions are named to collide with them.
func TestCodemodeTypeNamesAreReserved(t *testing.T) {
	if len(codemodeTypeNames) == 0 {
		t.Fatal("no type names found in CodemodeDeclaration")
	}
	var cs []typegen.Connector
	for i, name := range codemodeTypeNames {
		rest, ok := strings.CutPrefix(name, "Codemode")
		if !ok {
			t.Fatalf("type %s of the codemode global does not start with Codemode", name)
		}
		in := `{"$defs":{"` + rest + `":{"type":"string"}},"$ref":"#/$defs/` + rest + `"}`
		cs = append(cs, typegen.Connector{Name: "codemode", Methods: []connectors.Tool{{Name: "m" + strings.Repeat("x", i), InputSchema: json.RawMessage(in)}}})
	}
	res := typegen.Generate(cs, codemodeTypeNames...)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^type (\w+)`).FindAllStringSubmatch(CodemodeDeclaration(nil)+res.Text, -1) {
		if seen[m[1]] {
			t.Errorf("type %s declared twice:\n%s", m[1], res.Text)
		}
		seen[m[1]] = true
	}
}

// The codemode global's TypeScript is made from the Go types of the
// services' answers: every field JSON encodes is a member (optional when
// omitempty, with its doc tag as JSDoc), named answer types are referred
// to by name, and a service's declaration shows its parameters and the
// type of its answer.
func TestCodemodeDeclarationIsMadeFromGoTypes(t *testing.T) {
	type inner struct {
		A string `json:"a" doc:"Left out inline."`
		B bool   `json:"b,omitempty"`
	}
	type answer struct {
		Name   string          `json:"name" doc:"Its name."`
		Kind   PathKind        `json:"kind"`
		N      int             `json:"n,omitempty"`
		Raw    json.RawMessage `json:"raw,omitempty"`
		Items  []inner         `json:"items"`
		Hit    *Description    `json:"hit"`
		Plain  float64
		Skip   string `json:"-"`
		hidden string
	}
	want := `{
  /** Its name. */
  name: string;
  kind: "connector" | "method" | "snippet" | "namespace";
  n?: number;
  raw?: unknown;
  items: { a: string; b?: boolean }[];
  hit: CodemodeDescription;
  Plain: number;
}`
	if got := tsStruct(reflect.TypeFor[answer](), false); got != want {
		t.Errorf("tsStruct:\n%s\nwant:\n%s", got, want)
	}
	decl := CodemodeDeclaration([]Service{
		{Name: "search", Doc: "Find.", Params: []sandbox.Param{{Name: "query", String: true}}, Result: reflect.TypeFor[SearchAnswer]()},
		{Name: "describe", Doc: "Describe.", Params: []sandbox.Param{{Name: "path", String: true}}, Result: reflect.TypeFor[*Description]()},
	})
	for _, w := range []string{
		"type CodemodeSearchResult = {\n  /** \"connector\", \"connector.method\" or \"snippets.name\"; pass it to describe. */\n  path: string;\n",
		"  search(query: string): Promise<{ results: CodemodeSearchResult[]; total: number }>;\n",
		"  describe(path: string): Promise<CodemodeDescription>;\n",
		"  methods?: { method: string; group?: string; description: string; requiresApproval?: boolean }[];\n",
		"  groups?: { name: string; count: number }[];\n",
	} {
		if !strings.Contains(decl, w) {
			t.Errorf("CodemodeDeclaration lacks %q:\n%s", w, decl)
		}
	}
	if strings.Contains(decl, "run(name: string, input: unknown)") || strings.Count(decl, "  run(") != 1 {
		t.Errorf("codemode.run is declared other than once, by the sandbox's own line:\n%s", decl)
	}
}
