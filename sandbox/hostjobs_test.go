package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// bothExecutors returns the in-process executor and a one-worker pool.
func bothExecutors(t *testing.T) map[string]Executor {
	t.Helper()
	return map[string]Executor{"inprocess": newExecutor(t), "process": newPool(t, ProcessOptions{Size: 1})}
}

// TestHostValuesReachTheProgram checks what a program gets for the JSON a
// host call returns, on both executors: the value JSON.parse would give
// (built in Go, or by JSON.parse for what the fast path leaves to it), and
// a rejection with an Error for what is not JSON.
func TestHostValuesReachTheProgram(t *testing.T) {
	// Past the fast path's nesting limit (1,000; the pass package's own
	// test covers the boundary), JSON.parse builds the value.
	const depth = 1500
	deep := strings.Repeat("[", depth) + "7" + strings.Repeat("]", depth)
	big := `{"text":"` + strings.Repeat("x", 3<<20) + `","n":1}`
	tests := []struct {
		name, raw, code, want string
	}{
		{"object", `{"ok":true}`, "r.ok", `true`},
		{"true", `true`, "[typeof r, r]", `["boolean",true]`},
		{"null", `null`, "r === null", `true`},
		{"number", ` -1.5e2 `, "[typeof r, r]", `["number",-150]`},
		{"negative zero", `-0`, "Object.is(r, -0)", `true`},
		{"string", `"héllo\n\u00e9\ud83d\ude00"`, "[r.length, r]", `[9,"héllo\né😀"]`},
		{"lone surrogate", `"\ud83d!"`, "r.charCodeAt(0)", `65533`},
		{"array", `[1,"a",null,[],{}]`, "[Array.isArray(r), r.length, r]", `[true,5,[1,"a",null,[],{}]]`},
		{"key order and duplicates", `{"b":1,"a":2,"b":3}`, "[Object.keys(r), r.b]", `[["b","a"],3]`},
		{"__proto__ is an own key", `{"__proto__":{"polluted":true}}`,
			"[Object.keys(r), Object.getPrototypeOf(r) === Object.prototype, ({}).polluted === undefined, r.__proto__.polluted]", `[["__proto__"],true,true,true]`},
		{"no setter runs", `{"ok":true}`, "r.ok === true && globalThis.hit === undefined", `true`},
		{"plain objects", `{"a":{"b":[{"c":1}]}}`, "[Object.getPrototypeOf(r.a.b[0]) === Object.prototype, r.a.b[0].c]", `[true,1]`},
		{"deeper than the fast path", deep, "let v = r; let n = 0; while (Array.isArray(v)) { v = v[0]; n++ }\n[n, v]", fmt.Sprintf("[%d,7]", depth)},
		{"large", big, "[r.text.length, r.n]", fmt.Sprintf("[%d,1]", 3<<20)},
		{"empty is undefined", ``, "typeof r", `"undefined"`},
		{"invalid JSON rejects", `{"a":`, "", `"Error: the host returned invalid JSON: SyntaxError: Unexpected end of JSON input (EOF) at parse (native)"`},
		{"out of range number rejects", `1e400`, "", `true`},
	}
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					h := &fakeHost{call: func(context.Context, Call) (json.RawMessage, error) { return json.RawMessage(tc.raw), nil }}
					code := "Object.defineProperty(Object.prototype, 'ok', { set() { globalThis.hit = true }, configurable: true });\n" +
						"const r = await notes.listNotes({});\n" + tc.code
					switch tc.name {
					case "invalid JSON rejects":
						code = "try { await notes.listNotes({}) } catch (e) { return String(e) }"
					case "out of range number rejects":
						code = "try { await notes.listNotes({}) } catch (e) { return e instanceof Error && e.message.startsWith('the host returned invalid JSON') }"
					}
					wantCompleted(t, code, run(t, e, h, code, Limits{}), tc.want)
				})
			}
		})
	}
}

// TestHostErrorsAreErrors: a host error reaches the program as an Error
// with the host's message, whether the call ran on the VM's goroutine (one
// call at a time) or on a goroutine of its own (Promise.all).
func TestHostErrorsAreErrors(t *testing.T) {
	h := func() *fakeHost {
		return &fakeHost{call: func(_ context.Context, c Call) (json.RawMessage, error) {
			return nil, fmt.Errorf("%s: 503 unavailable", c.Method)
		}}
	}
	tests := []struct{ name, code, want string }{
		{"sequential", "const out = [];\nfor (let i = 0; i < 3; i++) { try { await notes.listNotes({ i }) } catch (e) { out.push([e instanceof Error, e.message]) } }\nout",
			`[[true,"listNotes: 503 unavailable"],[true,"listNotes: 503 unavailable"],[true,"listNotes: 503 unavailable"]]`},
		{"concurrent", "const rs = await Promise.allSettled([notes.listNotes({}), notes.createNote({})]);\nrs.map(r => [r.status, r.reason instanceof Error, r.reason.message])",
			`[["rejected",true,"listNotes: 503 unavailable"],["rejected",true,"createNote: 503 unavailable"]]`},
	}
	for name, e := range bothExecutors(t) {
		for _, tc := range tests {
			t.Run(name+" "+tc.name, func(t *testing.T) {
				wantCompleted(t, tc.code, run(t, e, h(), tc.code, Limits{}), tc.want)
			})
		}
	}
}

// slowHost answers connector calls after d, or when their context ends;
// it records when each call began.
type slowHost struct {
	fakeHost
	d time.Duration

	mu     sync.Mutex
	starts []time.Time
}

func (h *slowHost) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	h.mu.Lock()
	h.starts = append(h.starts, time.Now())
	h.mu.Unlock()
	select {
	case <-time.After(h.d):
		return json.RawMessage(`"slow"`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *slowHost) firstStart(t *testing.T) time.Time {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.starts) == 0 {
		t.Fatal("the host saw no call")
	}
	return h.starts[0]
}

// TestTimersFireWhileACallIsAwaited: a call awaited while a timer is set
// does not hold the event loop up; the timer fires on time.
func TestTimersFireWhileACallIsAwaited(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			// Had the timer waited for the call, the race would end with
			// the call's answer.
			h := &slowHost{d: 5 * time.Second}
			code := "await Promise.race([notes.listNotes({}), new Promise(r => setTimeout(() => r('timeout'), 30))])"
			o := run(t, e, h, code, Limits{})
			wantCompleted(t, code, o, `"timeout"`)
			if len(o.Logs) != 1 || !strings.Contains(o.Logs[0], "1 call was still in flight") {
				t.Errorf("logs %q, want the in-flight warning", o.Logs)
			}
		})
	}
}

// TestHeldCallStartsDuringALongTurn: a call made just before a long
// stretch of synchronous work starts while that work runs, not after it.
func TestHeldCallStartsDuringALongTurn(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &slowHost{d: 10 * time.Millisecond}
			// The clock is read every 10,000 iterations: a pass may read it at
			// most a million times, which a tight loop does in 400 ms on a
			// fast machine.
			code := "const p = notes.listNotes({});\nconst end = Date.now() + 400;\nwhile (Date.now() < end) { for (let i = 0; i < 10000; i++) {} }\nawait p"
			start := time.Now()
			o := run(t, e, h, code, Limits{})
			wantCompleted(t, code, o, `"slow"`)
			if d := h.firstStart(t).Sub(start); d > 250*time.Millisecond {
				t.Errorf("the call started %v after the run: it waited for the busy loop", d)
			}
		})
	}
}

// TestCallStartsAtOnceWithATimerSet: a call followed by a timer in the same
// turn runs on a goroutine of its own at the end of the turn, not after the
// timer.
func TestCallStartsAtOnceWithATimerSet(t *testing.T) {
	e := newExecutor(t)
	h := &slowHost{d: time.Millisecond}
	code := "const p = notes.listNotes({});\nawait new Promise(r => setTimeout(r, 300));\nawait p"
	start := time.Now()
	wantCompleted(t, code, run(t, e, h, code, Limits{}), `"slow"`)
	if d := h.firstStart(t).Sub(start); d > 200*time.Millisecond {
		t.Errorf("the call started %v after the run, not at once", d)
	}
}

// TestSequentialCallsStopAndTimeOut: calls made one at a time (run on the
// VM's goroutine) still stop the program on ErrStop and end with the
// deadline.
func TestSequentialCallsStopAndTimeOut(t *testing.T) {
	stopErr := fmt.Errorf("approval needed: %w", ErrStop)
	for name, e := range bothExecutors(t) {
		t.Run(name+" stop", func(t *testing.T) {
			h := &fakeHost{call: func(_ context.Context, c Call) (json.RawMessage, error) {
				if c.Seq == 3 {
					return nil, stopErr
				}
				return json.RawMessage(`{}`), nil
			}}
			o := run(t, e, h, "for (let i = 0; i < 10; i++) { try { await notes.listNotes({ i }) } catch {} }", Limits{})
			if o.Status != Stopped || !errors.Is(o.Stop, ErrStop) || o.Stop.Error() != stopErr.Error() || o.Calls != 3 {
				t.Fatalf("outcome %v stop=%v calls=%d, want stopped at call 3", o.Status, o.Stop, o.Calls)
			}
		})
		t.Run(name+" timeout", func(t *testing.T) {
			h := &slowHost{d: time.Millisecond}
			o := run(t, e, h, "while (true) await notes.listNotes({})", Limits{Timeout: 200 * time.Millisecond})
			if o.Status != Failed || o.Error != "timed out after 200ms" {
				t.Fatalf("outcome %v %q, want a timeout", o.Status, o.Error)
			}
		})
	}
}

// TestArgumentSerialisation covers what connector methods send: the JSON
// form of a plain object, and the errors for anything else.
func TestArgumentSerialisation(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"nested", "(await notes.createNote({ a: [1, { b: 'é' }], n: null })).args", `{"a":[1,{"b":"é"}],"n":null}`},
		{"own toJSON", "(await notes.createNote({ toJSON() { return { x: 1 } } })).args", `{"x":1}`},
		{"toJSON to undefined", "try { notes.createNote({ toJSON() {} }) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument; its JSON form is undefined"`},
		{"toJSON to an array", "try { notes.createNote({ toJSON() { return [1] } }) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument; its JSON form is [1]"`},
		{"BigInt", "try { notes.createNote({ n: 1n }) } catch (e) { return e instanceof TypeError }", `true`},
		{"proxy of an object", "(await notes.createNote(new Proxy({ a: 1 }, {}))).args", `{"a":1}`},
		{"function", "try { notes.createNote(() => 1) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument, got function"`},
		{"undefined", "(await notes.createNote(undefined)).args", `{}`},
		{"getter runs once", "let n = 0; const a = { get x() { return ++n } };\nconst r = await notes.createNote(a);\n[r.args, n]", `[{"x":1},1]`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCompleted(t, tc.code, runCode(t, e, &fakeHost{}, tc.code, Limits{}), tc.want)
		})
	}
}

// TestConnectorMethodForms: a method read from the connector object (made
// in JavaScript), the target's own function (reached through its property
// descriptor) and a detached method all make the same call; a method the
// program replaces is the program's.
func TestConnectorMethodForms(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"read twice is the same function", "notes.createNote === notes.createNote", `true`},
		{"detached", "const f = notes.createNote;\nconst r = await f({ a: 1 });\n[r.seq, r.method, r.args]", `[1,"createNote",{"a":1}]`},
		{"own function", "const f = Object.getOwnPropertyDescriptor(notes, 'createNote').value;\nconst r = await f({ a: [1] });\n[r.seq, r.method, r.args]", `[1,"createNote",{"a":[1]}]`},
		{"own function rejects the same", "const f = Object.getOwnPropertyDescriptor(notes, 'createNote').value;\ntry { f([1]) } catch (e) { return String(e) }",
			`"TypeError: notes.createNote expects one object argument, got array"`},
		{"replaced", "notes.createNote = () => 'mine';\nnotes.createNote({})", `"mine"`},
		{"deleted", "delete notes.createNote;\ntry { notes.createNote({}) } catch (e) { return e.message }", `"notes.createNote is not a function; did you mean createNote?"`},
		{"seq across forms", "const a = await notes.listNotes({});\nconst b = await Object.getOwnPropertyDescriptor(notes, 'listNotes').value({});\n[a.seq, b.seq]", `[1,2]`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCompleted(t, tc.code, runCode(t, e, &fakeHost{}, tc.code, Limits{}), tc.want)
		})
	}
}
