package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"strings"
	"sync"
	"testing"
	"time"
)

// bothExecutors returns the in-process executor and a one-worker pool.
func bothExecutors(t *testing.T) map[string]sandbox.Executor {
	t.Helper()
	return map[string]sandbox.Executor{"inprocess": newExecutor(t), "process": newPool(t, Options{Size: 1})}
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
					h := &sandboxtest.Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) { return json.RawMessage(tc.raw), nil }}
					code := "Object.defineProperty(Object.prototype, 'ok', { set() { globalThis.hit = true }, configurable: true });\n" +
						"const r = await notes.listNotes({});\n" + tc.code
					switch tc.name {
					case "invalid JSON rejects":
						code = "try { await notes.listNotes({}) } catch (e) { return String(e) }"
					case "out of range number rejects":
						code = "try { await notes.listNotes({}) } catch (e) { return e instanceof Error && e.message.startsWith('the host returned invalid JSON') }"
					}
					sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), tc.want)
				})
			}
		})
	}
}

// TestHostErrorsAreErrors: a host error reaches the program as an Error
// with the host's message, whether the call ran on the VM's goroutine (one
// call at a time) or on a goroutine of its own (Promise.all).
func TestHostErrorsAreErrors(t *testing.T) {
	h := func() *sandboxtest.Host {
		return &sandboxtest.Host{OnCall: func(_ context.Context, c sandbox.Call) (json.RawMessage, error) {
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
				sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, h(), tc.code, sandbox.Limits{}), tc.want)
			})
		}
	}
}

// slowHost answers connector calls after d, or when their context ends;
// it records when each call began.
type slowHost struct {
	sandboxtest.Host
	d time.Duration

	mu     sync.Mutex
	starts []time.Time
}

func (h *slowHost) Call(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
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
			o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
			sandboxtest.WantCompleted(t, code, o, `"timeout"`)
			if len(o.Logs) != 1 || !strings.Contains(o.Logs[0], "1 call was still in flight") {
				t.Errorf("logs %q, want the in-flight warning", o.Logs)
			}
		})
	}
}

// TestHeldCallStartsDuringALongTurn: a call made just before a long
// stretch of synchronous work starts while that work runs, not after it:
// the host sees it before the program's clock reads the end of the work.
func TestHeldCallStartsDuringALongTurn(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &slowHost{d: 10 * time.Millisecond}
			// The clock is read every 10,000 iterations: a pass may read it at
			// most a million times.
			code := "const p = notes.listNotes({});\nconst end = Date.now() + 1000;\nwhile (Date.now() < end) { for (let i = 0; i < 10000; i++) {} }\nconst after = Date.now();\nreturn { r: await p, after }"
			o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
			after := completedAfter(t, code, o)
			if started := h.firstStart(t).UnixMilli(); started > after {
				t.Errorf("the call started at %d, after the busy loop ended at %d: it waited for it", started, after)
			}
		})
	}
}

// completedAfter checks that o completed with {r: "slow", after} and
// returns after, a reading of the program's clock (Unix milliseconds).
func completedAfter(t *testing.T, code string, o sandbox.Outcome) int64 {
	t.Helper()
	if o.Status != sandbox.Completed {
		t.Fatalf("Run(%q): status %v, error %q, want completed", code, o.Status, o.Error)
	}
	var got struct {
		R     string
		After int64
	}
	if err := json.Unmarshal(o.Result, &got); err != nil || got.R != "slow" || got.After == 0 {
		t.Fatalf("Run(%q): result %s (%v), want {r: \"slow\", after}", code, o.Result, err)
	}
	return got.After
}

// TestCallStartsAtOnceWithATimerSet: a call followed by a timer in the same
// turn runs on a goroutine of its own at the end of the turn, not after the
// timer: the host sees it before the timer fires.
func TestCallStartsAtOnceWithATimerSet(t *testing.T) {
	e := newExecutor(t)
	h := &slowHost{d: time.Millisecond}
	code := "const p = notes.listNotes({});\nawait new Promise(r => setTimeout(r, 300));\nconst after = Date.now();\nreturn { r: await p, after }"
	after := completedAfter(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}))
	if started := h.firstStart(t).UnixMilli(); started > after {
		t.Errorf("the call started at %d, after the timer fired at %d: it waited for it", started, after)
	}
}

// TestSequentialCallsStopAndTimeOut: calls made one at a time (run on the
// VM's goroutine) still stop the program on ErrStop and end with the
// deadline.
func TestSequentialCallsStopAndTimeOut(t *testing.T) {
	stopErr := fmt.Errorf("approval needed: %w", sandbox.ErrStop)
	for name, e := range bothExecutors(t) {
		t.Run(name+" stop", func(t *testing.T) {
			h := &sandboxtest.Host{OnCall: func(_ context.Context, c sandbox.Call) (json.RawMessage, error) {
				if c.Seq == 3 {
					return nil, stopErr
				}
				return json.RawMessage(`{}`), nil
			}}
			o := sandboxtest.Run(t, e, h, "for (let i = 0; i < 10; i++) { try { await notes.listNotes({ i }) } catch {} }", sandbox.Limits{})
			if o.Status != sandbox.Stopped || !errors.Is(o.Stop, sandbox.ErrStop) || o.Stop.Error() != stopErr.Error() || len(h.Calls()) != 3 {
				t.Fatalf("outcome %v stop=%v calls=%d, want stopped at call 3", o.Status, o.Stop, len(h.Calls()))
			}
		})
		t.Run(name+" timeout", func(t *testing.T) {
			h := &slowHost{d: time.Millisecond}
			o := sandboxtest.Run(t, e, h, "while (true) await notes.listNotes({})", sandbox.Limits{Timeout: 200 * time.Millisecond})
			if o.Status != sandbox.Failed || o.Error != "timed out after 200ms" {
				t.Fatalf("outcome %v %q, want a timeout", o.Status, o.Error)
			}
		})
	}
}
