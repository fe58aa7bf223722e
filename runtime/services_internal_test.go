package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// A host-backed codemode function is one entry in services: every entry
// with a doc is offered to programs (serviceList), dispatched by a name
// no other entry has (pass.Service) and declared with its parameters and the TypeScript of
// its answer; codemode.run's lookup, which has none, is dispatched but
// neither offered nor declared (the sandbox installs and declares run).
func TestEveryServiceIsOneEntry(t *testing.T) {
	for i, sv := range services {
		if j := slices.IndexFunc(services, func(o service) bool { return o.Name == sv.Name }); j != i {
			t.Errorf("service %s is not dispatched by its name: entry %d has it too", sv.Name, j)
		}
		offered := slices.ContainsFunc(serviceList, func(s sandbox.Service) bool { return s.Name == sv.Name })
		if sv.Doc == "" {
			if offered {
				t.Errorf("%s, which has no doc, is offered to programs", sv.Name)
			}
			continue // and declared by the sandbox's own line (below)
		}
		declared := strings.Contains(codemodeDeclaration, "\n  "+sv.Name+"(")
		if !offered || !declared || !strings.Contains(codemodeDeclaration, "/** "+sv.Doc+" */") {
			t.Errorf("service %s: offered %v, declared %v with its doc:\n%s", sv.Name, offered, declared, codemodeDeclaration)
		}
	}
	for _, w := range []string{
		"  search(query: string): Promise<{ results: CodemodeSearchResult[]; total: number }>;\n",
		"  describe(path: string): Promise<CodemodeDescription>;\n",
	} {
		if !strings.Contains(codemodeDeclaration, w) {
			t.Errorf("codemodeDeclaration lacks %q:\n%s", w, codemodeDeclaration)
		}
	}
	if strings.Contains(codemodeDeclaration, "run(name: string, input: unknown)") || strings.Count(codemodeDeclaration, "  run(") != 1 {
		t.Errorf("codemode.run is declared other than once, by the sandbox's own line:\n%s", codemodeDeclaration)
	}
}
