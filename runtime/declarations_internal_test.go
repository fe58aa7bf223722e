package runtime

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// The codemode global's type names are never declared again by a
// connector, even one whose definitions are named to collide with them.
func TestCodemodeTypeNamesAreReserved(t *testing.T) {
	if len(codemodeTypeNames) == 0 {
		t.Fatal("no type names found in codemodeDeclaration")
	}
	var cs []typegen.Connector
	for i, name := range codemodeTypeNames {
		rest, ok := strings.CutPrefix(name, "Codemode")
		if !ok {
			t.Fatalf("type %s of the codemode global does not start with Codemode", name)
		}
		in := `{"$defs":{"` + rest + `":{"type":"string"}},"$ref":"#/$defs/` + rest + `"}`
		cs = append(cs, typegen.Connector{Name: "codemode", Methods: []typegen.Method{{Name: "m" + strings.Repeat("x", i), Input: json.RawMessage(in)}}})
	}
	res := typegen.Generate(cs, typegen.Options{Reserved: codemodeTypeNames})
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^type (\w+)`).FindAllStringSubmatch(codemodeDeclaration+res.Text, -1) {
		if seen[m[1]] {
			t.Errorf("type %s declared twice:\n%s", m[1], res.Text)
		}
		seen[m[1]] = true
	}
}
