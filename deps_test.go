package codemode_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The domain, the stores, the MCP server and the approval console do not
// link the sandbox (goja, esbuild); the domain, the conformance suite and
// the console link no database or MCP library either; each store links
// only its own database driver; the OAuth client links none of them.
func TestDependencies(t *testing.T) {
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/codemode-mcp/codemode-mcp", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/storetest", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/runtime/sqlitestore", []string{"dop251/goja", "evanw/esbuild", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/runtime/pgstore", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/server", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx"}},
		{"github.com/codemode-mcp/codemode-mcp/console", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		// The OAuth client is the standard library's: no database (its
		// store is an interface), no MCP library, no sandbox.
		{"github.com/codemode-mcp/codemode-mcp/internal/oauth", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
	}
	for _, tt := range tests {
		out, err := exec.Command("go", "list", "-deps", tt.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tt.pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range tt.forbidden {
				if strings.Contains(dep, f) {
					t.Errorf("%s links %s", tt.pkg, dep)
				}
			}
		}
	}
}
