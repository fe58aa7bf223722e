package worker

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// A service call takes the next sequence number, shared with connector
// calls and steps, so the host can log and replay its answer; inside a
// step's function it takes none (the step's value replays). On both
// executors: the number crosses the worker pipe.
func TestServicesTakeSequenceNumbers(t *testing.T) {
	code := `await notes.listNotes({});
const s = await codemode.search('x');
const d = await codemode.describe('notes');
const v = await codemode.step('s', async () => { await null; return (await codemode.describe('notes.listNotes')).path });
await notes.createNote({});
[s.total, d.path, v]`
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &sandboxtest.Host{}
			o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals, Services: sandboxtest.Services}, h)
			if err != nil {
				t.Fatal(err)
			}
			sandboxtest.WantCompleted(t, code, o, `[0,"notes","notes.listNotes"]`)
			want := []string{"call 1 notes.listNotes", "search 2 x", "describe 3 notes", "stepResult 4 s", "describe 0 notes.listNotes", "stepDone 4 s", "call 5 notes.createNote"}
			if diff := cmp.Diff(want, h.Log()); diff != "" {
				t.Errorf("host log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAServiceIsTwoEdits adds a host-backed codemode function the way the
// runtime adds codemode.search: its entry in the Program's Services and
// its answer in the host. On both executors the program gets the answer,
// arguments are checked and sent as a JSON array, and a host error is
// thrown into the program.
func TestAServiceIsTwoEdits(t *testing.T) {
	p := sandbox.Program{
		Globals:  sandboxtest.Globals,
		Services: []sandbox.Service{{Name: "forecast", Params: []sandbox.Param{{Name: "city", String: true}, {Name: "options"}}}}, // edit 1
	}
	h := &sandboxtest.Host{OnService: func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) { // edit 2
		if strings.Contains(string(args), "Atlantis") {
			return nil, errors.New("no weather in Atlantis")
		}
		return json.RawMessage(`{"service":"` + name + `","args":` + string(args) + `}`), nil
	}}
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct{ code, want string }{
				{"await codemode.forecast('Oslo', { days: 2, at: new Date(0) })", `{"service":"forecast","args":["Oslo",{"days":2,"at":"1970-01-01T00:00:00.000Z"}]}`},
				{"(await codemode.forecast('Oslo')).args", `["Oslo",null]`},
				{"let m; try { await codemode.forecast(7) } catch (e) { m = e.message }\nm", `"codemode.forecast(city, options): city must be a string, got number"`},
				{"let m; try { await codemode.forecast('Atlantis') } catch (e) { m = e.message }\nm", `"no weather in Atlantis"`},
				{"typeof codemode.search", `"undefined"`},
			} {
				p.Code = tc.code
				o, err := e.Run(context.Background(), p, h)
				if err != nil {
					t.Fatal(err)
				}
				sandboxtest.WantCompleted(t, tc.code, o, tc.want)
			}
		})
	}
}

// A connector whose downstream did not start is named in the program's
// globals as unavailable: no object is installed for it, and a program
// that uses it is told why (across the worker pipe too); the other
// connectors work.
func TestUnavailableGlobal(t *testing.T) {
	globals := append(slices.Clone(sandboxtest.Globals), sandbox.Global{Name: "down", Unavailable: "start /opt/down-server: exit status 1"})
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			run := func(code string) sandbox.Outcome {
				t.Helper()
				o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: globals}, &sandboxtest.Host{})
				if err != nil {
					t.Fatalf("Run(%q): internal error: %v", code, err)
				}
				return o
			}
			o := run("await down.list({})")
			want := "ReferenceError: down is not defined (line 1:7); connector down is unavailable: start /opt/down-server: exit status 1"
			if o.Status != sandbox.Failed || o.Error != want {
				t.Errorf("using it: %v %q\nwant failed %q", o.Status, o.Error, want)
			}
			o = run("const m = 'createNote';\nawait notse[m]({})")
			want = "ReferenceError: notse is not defined (line 2:7); did you mean notes? Available globals: notes, everything, codemode"
			if o.Status != sandbox.Failed || o.Error != want {
				t.Errorf("a misspelt connector: %v %q\nwant failed %q (the unavailable one is not offered)", o.Status, o.Error, want)
			}
			sandboxtest.WantCompleted(t, "typeof down", run("[typeof down, typeof notes.createNote]"), `["undefined","function"]`)
		})
	}
}

// TestCallErrorDetails: a host error with details throws an Error that
// has the details' members as properties (its own message and stack
// kept), on both executors (the process one carries them over the pipe).
func TestCallErrorDetails(t *testing.T) {
	host := func() *sandboxtest.Host {
		return &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
			if c.Method == "deleteNote" {
				return nil, errors.New("plain failure")
			}
			return nil, &sandbox.CallError{
				Message: "GET /pets/{id}: 404 Not Found: no such pet",
				Details: json.RawMessage(`{"status":404,"body":{"message":"no such pet"},"message":"not this one","stack":"nor this"}`),
			}
		}}
	}
	code := `async () => {
		try { await notes.createNote({}); } catch (e) {
			return [e instanceof Error, e.message, e.status, e.body.message, String(e.stack).includes("line"), Object.keys(e).sort()];
		}
	}`
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals}, host())
			if err != nil {
				t.Fatal(err)
			}
			sandboxtest.WantCompleted(t, "details", o, `[true,"GET /pets/{id}: 404 Not Found: no such pet",404,"no such pet",false,["body","status"]]`)
			o, err = e.Run(context.Background(), sandbox.Program{Code: `async () => { try { await notes.deleteNote({}); } catch (e) { return [e.message, e.status === undefined]; } }`, Globals: sandboxtest.Globals}, host())
			if err != nil {
				t.Fatal(err)
			}
			sandboxtest.WantCompleted(t, "plain", o, `["plain failure",true]`)
		})
	}
}
