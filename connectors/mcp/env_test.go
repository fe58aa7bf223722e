package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

func TestChildEnv(t *testing.T) {
	environ := []string{
		"HOME=/home/me", "PATH=/bin", "LANG=C.UTF-8", "TMPDIR=/tmp/x",
		"CODEMODE_TOKEN=tok", "codemode_config=c", "AWS_SECRET=aws", "GITHUB_TOKEN=gh", "EDITOR=vi", "NOEQUALS",
	}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"minimal", Config{}, []string{"HOME=/home/me", "LANG=C.UTF-8", "PATH=/bin", "TMPDIR=/tmp/x"}},
		{"env adds and overrides", Config{Env: map[string]string{"PATH": "/opt/bin", "MODE": "x", "B": "2", "A": "1", "C": "x=y"}},
			[]string{"A=1", "B=2", "C=x=y", "HOME=/home/me", "LANG=C.UTF-8", "MODE=x", "PATH=/opt/bin", "TMPDIR=/tmp/x"}},
		{"named", Config{Inherit: []string{"GITHUB_TOKEN", "MISSING"}},
			[]string{"GITHUB_TOKEN=gh", "HOME=/home/me", "LANG=C.UTF-8", "PATH=/bin", "TMPDIR=/tmp/x"}},
		{"all but ours", Config{InheritAll: true},
			[]string{"AWS_SECRET=aws", "EDITOR=vi", "GITHUB_TOKEN=gh", "HOME=/home/me", "LANG=C.UTF-8", "PATH=/bin", "TMPDIR=/tmp/x"}},
		{"ours never, even by name", Config{Inherit: []string{"CODEMODE_TOKEN"}},
			[]string{"HOME=/home/me", "LANG=C.UTF-8", "PATH=/bin", "TMPDIR=/tmp/x"}},
		{"ours when given explicitly", Config{Env: map[string]string{"CODEMODE_X": "given"}},
			[]string{"CODEMODE_X=given", "HOME=/home/me", "LANG=C.UTF-8", "PATH=/bin", "TMPDIR=/tmp/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, childEnv(&tt.cfg, environ)); diff != "" {
				t.Errorf("childEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioServerSeesOnlyItsEnvironment starts the fixture and asks it for
// its environment: the server's token and unrelated secrets stay behind.
func TestStdioServerSeesOnlyItsEnvironment(t *testing.T) {
	t.Setenv("CODEMODE_TOKEN", "server-token-value")
	t.Setenv("UNRELATED_SECRET", "do-not-pass")
	t.Setenv("PASS_ME", "passed")
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), Env: map[string]string{"GIVEN": "yes"}, Inherit: []string{"PASS_ME"}})
	res, err := c.Call(context.Background(), "environ", nil)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal(res.Value, &env); err != nil {
		t.Fatalf("environ result %s: %v", res.Value, err)
	}
	for _, name := range []string{"CODEMODE_TOKEN", "UNRELATED_SECRET"} {
		if v, ok := env[name]; ok {
			t.Errorf("the server sees %s=%q", name, v)
		}
	}
	if env["GIVEN"] != "yes" || env["PASS_ME"] != "passed" || env["PATH"] == "" {
		t.Errorf("environment %v lacks GIVEN, PASS_ME or PATH", env)
	}
}

// TestStderrIsScrubbed: a server that prints a secret on stderr and exits
// fails to start with an error quoting its stderr without the secret; the
// log has it scrubbed too.
func TestStderrIsScrubbed(t *testing.T) {
	rec := &recorder{}
	_, err := Dial(context.Background(), Config{
		Name:     "fx",
		Command:  "sh",
		Args:     []string{"-c", `echo "bad key sk-live-123456" >&2; exit 3`},
		Logger:   slog.New(rec),
		Scrubber: scrub.New("sk-live-123456"),
	})
	if err == nil {
		t.Fatal("Dial succeeded")
	}
	if strings.Contains(err.Error(), "sk-live-123456") || !strings.Contains(err.Error(), "bad key [redacted]") {
		t.Errorf("error %q: want the stderr line with the key redacted", err)
	}
	for _, r := range rec.find(func(map[string]string) bool { return true }) {
		for k, v := range r {
			if strings.Contains(v, "sk-live-123456") {
				t.Errorf("log record %s=%q holds the secret", k, v)
			}
		}
	}
}
