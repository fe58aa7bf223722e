package codemode_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The domain, the stores, the catalog, the durable engine, the MCP server
// and the approval console do not link the sandbox's JavaScript engine (goja,
// esbuild): they speak of programs and outcomes through package sandbox's
// types only; the domain, the conformance suite and the console link no
// database or MCP library either; each store links only its own database
// driver; the OAuth client links none of them.
func TestDependencies(t *testing.T) {
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/codemode-mcp/codemode-mcp", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/store/storetest", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		// The SQL both stores run is written against an interface of theirs:
		// it links neither driver.
		{"github.com/codemode-mcp/codemode-mcp/store/sqlstore", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/store/sqlite", []string{"dop251/goja", "evanw/esbuild", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/store/postgres", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "mark3labs/mcp-go"}},
		// The catalog links no database, no MCP library and no JavaScript
		// engine, and none of the packages that run programs or keep them.
		{"github.com/codemode-mcp/codemode-mcp/catalog", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go",
			"codemode-mcp/runtime", "codemode-mcp/store", "codemode-mcp/sandbox/", "codemode-mcp/server", "codemode-mcp/connectors/"}},
		{"github.com/codemode-mcp/codemode-mcp/runtime", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		{"github.com/codemode-mcp/codemode-mcp/server", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx"}},
		{"github.com/codemode-mcp/codemode-mcp/console", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		// The OAuth client is the standard library's: no database (its
		// store is an interface), no MCP library, no sandbox.
		{"github.com/codemode-mcp/codemode-mcp/internal/oauth", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		// The resource server (server.auth) is the standard library's too.
		{"github.com/codemode-mcp/codemode-mcp/internal/resource", []string{"dop251/goja", "evanw/esbuild", "modernc.org/sqlite", "jackc/pgx", "mark3labs/mcp-go"}},
		// What makes spans or carries trace context links the
		// OpenTelemetry API only: the SDK and its exporters (gRPC among
		// them) are internal/telemetry's, which internal/app wires.
		{"github.com/codemode-mcp/codemode-mcp/runtime", []string{"otel/sdk", "otel/exporters", "google.golang.org/grpc"}},
		{"github.com/codemode-mcp/codemode-mcp/server", []string{"otel/sdk", "otel/exporters", "google.golang.org/grpc"}},
		{"github.com/codemode-mcp/codemode-mcp/connectors/mcp", []string{"otel/sdk", "otel/exporters", "google.golang.org/grpc"}},
		{"github.com/codemode-mcp/codemode-mcp/connectors/openapi", []string{"otel/sdk", "otel/exporters", "google.golang.org/grpc"}},
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

// The durable engine serves the catalog of methods (package catalog); it
// does not build its own: runtime imports catalog, and typegen and the
// catalog share one $ref resolver (internal/jsonref).
func TestCatalogLayering(t *testing.T) {
	const mod = "github.com/codemode-mcp/codemode-mcp/"
	for _, tc := range []struct{ pkg, imports string }{
		{mod + "runtime", mod + "catalog"},
		{mod + "catalog", mod + "internal/jsonref"},
		{mod + "typegen", mod + "internal/jsonref"},
	} {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", tc.pkg, err, out)
		}
		if !slices.Contains(strings.Fields(string(out)), tc.imports) {
			t.Errorf("%s does not import %s", tc.pkg, tc.imports)
		}
	}
}

// The sandbox is layered: package sandbox is the API (the types of a
// program, its host and its outcome) and links nothing but the standard
// library; the packages that do the work (source, pass, worker) import it,
// never the other way round, and none of them links connectors: a host
// call is the host's business, and what a connector reports about it goes
// to the runtime through connectors.CallHook, not through the sandbox.
func TestSandboxLayering(t *testing.T) {
	const sandbox = "github.com/codemode-mcp/codemode-mcp/sandbox"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", sandbox).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", sandbox, err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != sandbox {
			t.Errorf("%s links %s; it may link only the standard library", sandbox, dep)
		}
	}
	for _, pkg := range []string{sandbox + "/source", sandbox + "/pass", sandbox + "/worker"} {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		if !slices.Contains(strings.Fields(string(out)), sandbox) {
			t.Errorf("%s does not import %s, whose types it is to speak", pkg, sandbox)
		}
		deps, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, deps)
		}
		if slices.Contains(strings.Fields(string(deps)), "github.com/codemode-mcp/codemode-mcp/connectors") {
			t.Errorf("%s links connectors", pkg)
		}
	}
}
