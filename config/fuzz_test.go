package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// FuzzParse checks that Parse never panics and returns either a valid
// Config or errors that are all located *Error values.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"full.yaml", "claude_desktop.json", "vscode/.vscode/mcp.json", "../../config.example.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "{}", "[]", "x", "connectors:\n  a:\n    comand: x\n", "a: &a [*a]\n", "a: &a {b: *a}\n",
		"connectors: {a: {<<: [{command: x}, {url: y}]}}", "server: {name: ${X:-${Y:-z}}}",
		"mcpServers: {a-b: {url: \"http://x/sse\", type: sse}}", "? [a]\n: b\n", "!!map {a: b}",
		"sandbox: {memory_limit: 1e400}", "connectors:\n  a: {builtin: notes}\n  a: {builtin: notes}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parse(data, "fuzz.yaml", func(string) (string, bool) { return "", false })
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned cfg=%v err=%v: want exactly one", cfg != nil, err)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if e.File != "fuzz.yaml" || err.Error() == "" {
				t.Fatalf("bad error: %+v", e)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range cfg.Connectors {
			if err := connectors.ValidateConnectorName(c.Name); err != nil {
				t.Fatalf("accepted a bad name: %v", err)
			}
			if seen[c.Name] {
				t.Fatalf("accepted duplicate connector %q", c.Name)
			}
			seen[c.Name] = true
			sources := 0
			for _, s := range []string{c.Builtin, c.Command, c.URL, c.OpenAPI} {
				if s != "" {
					sources++
				}
			}
			if sources != 1 || c.Kind.String() == "unknown" {
				t.Fatalf("connector %q: kind %v with %d sources", c.Name, c.Kind, sources)
			}
		}
		if cfg.Sandbox.Timeout <= 0 || cfg.Sandbox.MemoryLimit <= 0 || cfg.Store.MaxExecutions <= 0 {
			t.Fatalf("accepted non-positive limits: %+v %+v", cfg.Sandbox, cfg.Store)
		}
	})
}
