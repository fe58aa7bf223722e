package worker

import (
	"context"
	"encoding/json"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"strings"
	"sync"
	"testing"
)

// checkingHost is a sandboxtest.Host that is also a Checker.
type checkingHost struct {
	sandboxtest.Host
	check func(calls []sandbox.StaticCall) []sandbox.Problem

	mu   sync.Mutex
	seen [][]sandbox.StaticCall
}

func (h *checkingHost) Check(_ context.Context, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	h.mu.Lock()
	h.seen = append(h.seen, calls)
	h.mu.Unlock()
	if h.check == nil {
		return nil, nil
	}
	return h.check(calls), nil
}

// The check runs before the first statement, on both executors: a host's
// problems fail the pass, in source order, and nothing is called.
func TestCheckFailsBeforeRunning(t *testing.T) {
	code := "await notes.listNotes({});\nawait everything.get_summ({ a: 1 });\nawait everything.echo({ mesage: 'x' });"
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &checkingHost{check: func(calls []sandbox.StaticCall) []sandbox.Problem {
				var out []sandbox.Problem
				for _, c := range calls {
					if c.Method == "get_summ" {
						out = append(out, sandbox.Problem{Line: c.Line, Col: c.Col, Message: "everything.get_summ is not a method; nearest: get_sum"})
					}
					if c.Method == "echo" {
						p := c.Args.Props[0]
						out = append(out, sandbox.Problem{Line: p.Line, Col: p.Col, Message: "unknown property " + p.Key})
					}
				}
				// Reported out of order: the sandbox sorts them.
				return []sandbox.Problem{out[1], out[0]}
			}}
			o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals}, h)
			if err != nil {
				t.Fatal(err)
			}
			want := "the program was checked before running and has 2 problems; nothing was run:\n" +
				"- line 2:18: everything.get_summ is not a method; nearest: get_sum\n" +
				"- line 3:25: unknown property mesage"
			if o.Status != sandbox.Failed || o.Error != want {
				t.Errorf("outcome %v %q\nwant failed %q", o.Status, o.Error, want)
			}
			if n := len(h.Calls()); n != 0 {
				t.Errorf("the host saw %d calls", n)
			}
			if len(h.seen) != 1 || len(h.seen[0]) != 3 {
				t.Fatalf("checked %v", h.seen)
			}
			raw, _ := json.Marshal(h.seen[0][2].Args)
			if !strings.Contains(string(raw), `"key":"mesage"`) {
				t.Errorf("the third call's argument reached the host as %s", raw)
			}
		})
	}
}

// A program with no problems runs; a host that is not a Checker checks
// nothing, but a misspelt connector is still found.
func TestCheckPasses(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &checkingHost{}
			o, err := e.Run(context.Background(), sandbox.Program{Code: "await notes.listNotes({ tag: 'x' })", Globals: sandboxtest.Globals}, h)
			if err != nil || o.Status != sandbox.Completed {
				t.Fatalf("%v %v %q", err, o.Status, o.Error)
			}
			if len(h.seen) != 1 {
				t.Errorf("checked %d times", len(h.seen))
			}
			o, err = e.Run(context.Background(), sandbox.Program{Code: "await notes.listNotes({});\nawait Notes.listNotes({})", Globals: sandboxtest.Globals}, &sandboxtest.Host{})
			want := "the program was checked before running and has a problem; nothing was run:\n- line 2:7: Notes is not defined; did you mean notes?"
			if err != nil || o.Status != sandbox.Failed || o.Error != want {
				t.Fatalf("misspelt connector: %v %v %q", err, o.Status, o.Error)
			}
		})
	}
}
