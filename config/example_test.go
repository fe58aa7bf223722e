package config_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/config"
)

// TestExampleConfig checks that config.example.yaml, which must run as-is,
// parses without warnings and pins the npm packages it starts.
func TestExampleConfig(t *testing.T) {
	t.Setenv("CODEMODE_TOKEN", "")
	cfg, err := config.Load("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
	var got []string
	for _, c := range cfg.Connectors {
		got = append(got, c.Name+":"+c.Kind.String())
	}
	if want := "notes:builtin everything:stdio memory:stdio placeholder:openapi"; strings.Join(got, " ") != want {
		t.Errorf("connectors = %v, want %s", got, want)
	}
	pinned := regexp.MustCompile(`^@modelcontextprotocol/[a-z-]+@\d+\.\d+\.\d+$`)
	for _, c := range cfg.Connectors {
		if c.Command != "npx" {
			continue
		}
		var pkgs []string
		for _, a := range c.Args {
			if strings.HasPrefix(a, "@") {
				pkgs = append(pkgs, a)
			}
		}
		if len(pkgs) != 1 || !pinned.MatchString(pkgs[0]) {
			t.Errorf("%s: npx package not pinned to a version: %v", c.Name, c.Args)
		}
	}
	var memory *config.Connector
	for i := range cfg.Connectors {
		if cfg.Connectors[i].Name == "memory" {
			memory = &cfg.Connectors[i]
		}
	}
	if memory == nil || !slices.Contains(memory.Approve, "delete_*") || memory.Revert["create_entities"] == "" {
		t.Errorf("memory connector lost its approve globs or revert: %+v", memory)
	}
}

func ExampleParse() {
	_, err := config.Parse([]byte("connectors:\n  files:\n    comand: npx\n"), "codemode.yaml")
	fmt.Println(err)
	// Output: codemode.yaml:3:5: connectors.files.comand: unknown key (did you mean "command"?)
}
