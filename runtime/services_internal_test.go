package runtime

import (
	"strings"
	"testing"
)

// The codemode global's declaration shows search and describe with their
// parameters and the TypeScript of their answers, and codemode.run once,
// by the sandbox's own line (its lookup service has no doc).
func TestCodemodeDeclarationShowsTheServices(t *testing.T) {
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
