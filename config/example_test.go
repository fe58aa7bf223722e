package config_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
		// On a fresh machine (empty npm cache, 2 cores) the two npx servers
		// downloading at once took 80 s to answer initialize: a minute
		// failed the quickstart's first `run` with "timed out after 1m0s".
		if c.StartTimeout < 3*time.Minute {
			t.Errorf("%s: start_timeout %v is too short for npx's first download", c.Name, c.StartTimeout)
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

// TestReadmeConfigs parses every YAML example of the README, as a reader
// would paste it (the variables it references set): an example that no
// longer parses, or warns, is a README that lies.
func TestReadmeConfigs(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindAllSubmatchIndex(readme, -1)
	if len(blocks) < 10 {
		t.Fatalf("found %d YAML examples in the README, want the dozen it has", len(blocks))
	}
	for _, b := range blocks {
		line := 1 + bytes.Count(readme[:b[2]], []byte("\n"))
		src := readme[b[2]:b[3]]
		if bytes.HasPrefix(src, []byte("scrape_configs:")) {
			continue // Prometheus's, not ours
		}
		// Two examples continue the team server's: they get its issuer.
		const teamAuth = "issuer: https://auth.example.com/\n    resource: https://mcp.example.com/mcp"
		switch {
		case bytes.Contains(src, []byte("# … as above")):
			src = bytes.Replace(src, []byte("# … as above"), []byte(teamAuth), 1)
		case bytes.Contains(src, []byte("per_user:")) && !bytes.Contains(src, []byte("server:")):
			src = append(slices.Clip(src), "server:\n  auth:\n    "+teamAuth+"\n"...)
		}
		t.Run(fmt.Sprintf("README.md:%d", line), func(t *testing.T) {
			t.Setenv("CODEMODE_TOKEN", "")
			for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllSubmatch(src, -1) {
				t.Setenv(string(m[1]), "secret-"+strings.ToLower(string(m[1])))
			}
			cfg, err := config.Parse(src, "README.md")
			if err != nil {
				t.Fatalf("%s\n%s", err, src)
			}
			for _, w := range cfg.Warnings {
				t.Errorf("warning: %v", w)
			}
		})
	}
}
