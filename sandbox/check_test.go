package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkingHost is a fakeHost that is also a Checker.
type checkingHost struct {
	fakeHost
	check func(calls []StaticCall) []Problem

	mu   sync.Mutex
	seen [][]StaticCall
}

func (h *checkingHost) Check(_ context.Context, calls []StaticCall) ([]Problem, error) {
	h.mu.Lock()
	h.seen = append(h.seen, calls)
	h.mu.Unlock()
	if h.check == nil {
		return nil, nil
	}
	return h.check(calls), nil
}

func staticOf(t *testing.T, code string) *staticInfo {
	t.Helper()
	n, err := Normalize(code)
	if err != nil {
		t.Fatal(err)
	}
	return n.static
}

// The static calls of a program are found in its syntax tree, located in
// the model's own source (TypeScript here), with what its literals say.
func TestCollectStatic(t *testing.T) {
	code := "```ts\n" + `async () => {
  const n: number = 2;
  await notes.createNote({ text: "hi", tags: ["a", n], n: -1.5, ok: true, none: null, ["k" + n]: 1 });
  await github.issues["list_for_repo"]?.({ owner, ...rest });
  const mine = { go: () => 1 };
  mine.go();
  JSON.stringify({});
}
` + "```"
	info := staticOf(t, code)
	var got []string
	for _, c := range info.calls {
		got = append(got, c.Connector+"."+c.Method)
	}
	if diff := cmp.Diff([]string{"notes.createNote", "github.issues.list_for_repo", "JSON.stringify"}, got); diff != "" {
		t.Fatalf("calls (-want +got):\n%s", diff)
	}
	c := info.calls[0]
	if c.Line != 4 || c.Col != 15 {
		t.Errorf("notes.createNote at %d:%d, want 4:15", c.Line, c.Col)
	}
	a := c.Args
	if a == nil || a.Kind != "object" || !a.Open || a.Value != nil || len(a.Props) != 5 {
		t.Fatalf("args of createNote: %+v", a)
	}
	want := map[string]string{"text": `string "hi"`, "tags": "array ", "n": "number -1.5", "ok": "boolean true", "none": "null null"}
	for _, p := range a.Props {
		if got := p.Value.Kind + " " + string(p.Value.Value); got != want[p.Key] {
			t.Errorf("property %s: %q, want %q", p.Key, got, want[p.Key])
		}
	}
	if p := a.Props[0]; p.Line != 4 || p.Col != 28 {
		t.Errorf("text at %d:%d, want 4:28", p.Line, p.Col)
	}
	gh := info.calls[1]
	if gh.Args == nil || !gh.Args.Open || len(gh.Args.Props) != 1 || gh.Args.Props[0].Value.Kind != "" {
		t.Errorf("args of list_for_repo: %+v", gh.Args)
	}
	if _, ok := info.roots["mine"]; ok {
		t.Error("a declared name is a root")
	}
	// A constant object literal has its JSON.
	info = staticOf(t, `notes.createNote({ text: "hi", n: [1, {x: false}] })`)
	if got := string(info.calls[0].Args.Value); got != `{"text":"hi","n":[1,{"x":false}]}` {
		t.Errorf("constant argument JSON %s", got)
	}
}

// The check runs before the first statement, on both executors: a host's
// problems fail the pass, in source order, and nothing is called.
func TestCheckFailsBeforeRunning(t *testing.T) {
	code := "await notes.listNotes({});\nawait everything.get_summ({ a: 1 });\nawait everything.echo({ mesage: 'x' });"
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &checkingHost{check: func(calls []StaticCall) []Problem {
				var out []Problem
				for _, c := range calls {
					if c.Method == "get_summ" {
						out = append(out, Problem{Line: c.Line, Col: c.Col, Message: "everything.get_summ is not a method; nearest: get_sum"})
					}
					if c.Method == "echo" {
						p := c.Args.Props[0]
						out = append(out, Problem{Line: p.Line, Col: p.Col, Message: "unknown property " + p.Key})
					}
				}
				// Reported out of order: the sandbox sorts them.
				return []Problem{out[1], out[0]}
			}}
			o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals}, h)
			if err != nil {
				t.Fatal(err)
			}
			want := "the program was checked before running and has 2 problems; nothing was run:\n" +
				"- line 2:18: everything.get_summ is not a method; nearest: get_sum\n" +
				"- line 3:25: unknown property mesage"
			if o.Status != Failed || o.Error != want {
				t.Errorf("outcome %v %q\nwant failed %q", o.Status, o.Error, want)
			}
			if n := len(h.recordedCalls()); n != 0 {
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

// A program with no problems runs; NoCheck skips the check; a host that
// is not a Checker checks nothing, but a misspelt connector is still
// found.
func TestCheckPasses(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &checkingHost{}
			o, err := e.Run(context.Background(), Program{Code: "await notes.listNotes({ tag: 'x' })", Globals: testGlobals}, h)
			if err != nil || o.Status != Completed {
				t.Fatalf("%v %v %q", err, o.Status, o.Error)
			}
			if len(h.seen) != 1 {
				t.Errorf("checked %d times", len(h.seen))
			}
			h = &checkingHost{}
			o, err = e.Run(context.Background(), Program{Code: "await notes.listNotes({})", Globals: testGlobals, NoCheck: true}, h)
			if err != nil || o.Status != Completed || len(h.seen) != 0 {
				t.Fatalf("NoCheck: %v %v %q, checked %d times", err, o.Status, o.Error, len(h.seen))
			}
			o, err = e.Run(context.Background(), Program{Code: "await notes.listNotes({});\nawait Notes.listNotes({})", Globals: testGlobals}, &fakeHost{})
			want := "the program was checked before running and has a problem; nothing was run:\n- line 2:7: Notes is not defined; did you mean notes?"
			if err != nil || o.Status != Failed || o.Error != want {
				t.Fatalf("misspelt connector: %v %v %q", err, o.Status, o.Error)
			}
		})
	}
}
