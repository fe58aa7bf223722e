package worker

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// echoHost answers connector calls with their arguments.
type echoHost struct{}

func (echoHost) Call(_ context.Context, c sandbox.Call) (json.RawMessage, error) { return c.Args, nil }
func (echoHost) StepResult(context.Context, sandbox.Step) (json.RawMessage, bool, error) {
	return nil, false, nil
}
func (echoHost) StepDone(context.Context, sandbox.Step, json.RawMessage, string) error { return nil }
func (echoHost) Service(context.Context, sandbox.ServiceCall) (json.RawMessage, error) {
	return nil, nil
}

// TestCodemodeBinaryIsAWorker builds the codemode-mcp binary and runs a
// pool on its hidden __sandbox-worker sub-command: the production path.
func TestCodemodeBinaryIsAWorker(t *testing.T) {
	bin := fixture.Codemode(t)
	pool, err := NewPool(Options{Command: []string{bin, "__sandbox-worker"}, Size: 1, MemoryLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	globals := []sandbox.Global{{Name: "notes", Methods: []string{"createNote"}}}
	for _, tc := range []struct {
		code, result, err string
	}{
		{code: "const r = await notes.createNote({ text: 'hi' });\nr.text + '!'", result: `"hi!"`},
		{code: "let a = []; while (true) a.push('x'.repeat(1e6))", err: "memory limit exceeded (64 MiB)"},
		{code: "1 + 1", result: "2"},
	} {
		o, err := pool.Run(context.Background(), sandbox.Program{Code: tc.code, Globals: globals, Limits: sandbox.Limits{Timeout: 20 * time.Second}}, echoHost{})
		if err != nil {
			t.Fatalf("Run(%q): %v", tc.code, err)
		}
		if string(o.Result) != tc.result || o.Error != tc.err {
			t.Errorf("Run(%q): %v %s %q, want %s %q", tc.code, o.Status, o.Result, o.Error, tc.result, tc.err)
		}
	}
	// Started by hand, the sub-command says what it is for.
	out, err := exec.Command(bin, "__sandbox-worker").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "started by the sandbox's process pool") {
		t.Errorf("worker started by hand: %v %q", err, out)
	}
}
