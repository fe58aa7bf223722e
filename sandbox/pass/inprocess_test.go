package pass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
	"github.com/google/go-cmp/cmp"
)

func TestConsole(t *testing.T) {
	tests := []struct {
		name string
		code string
		want []string
	}{
		{"scalars and JSON", "console.log('a', 1, true, null, undefined, {x: [1, {y: 2}]}, [1, 'two'])",
			[]string{`a 1 true null undefined {"x":[1,{"y":2}]} [1,"two"]`}},
		{"one entry per call", "console.log('one'); console.info('two'); console.debug('three')",
			[]string{"one", "two", "three"}},
		{"levels", "console.warn('careful', {n: 1}); console.error('bad')",
			[]string{`[warn] careful {"n":1}`, "[error] bad"}},
		{"errors", "console.log(new TypeError('nope'), {e: new Error('inner')})",
			[]string{`TypeError: nope {"e":"Error: inner"}`}},
		{"circular", "const o = {n: 1, list: [1]}; o.self = o; o.list.push(o); console.log(o)",
			[]string{`{"n":1,"list":[1,"[Circular]"],"self":"[Circular]"}`}},
		{"shared but not circular", "const s = {v: 1}; console.log({a: s, b: s})",
			[]string{`{"a":{"v":1},"b":{"v":1}}`}},
		{"functions, symbols, bigints", "function foo() {}; console.log(foo, Symbol('s'), 10n, {b: 2n})",
			[]string{`[Function: foo] Symbol(s) 10n {"b":"2n"}`}},
		{"nothing logged after the program ends", "setTimeout(() => console.log('late'), 0); console.log('early')",
			[]string{"early"}},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{})
			if o.Status != sandbox.Completed {
				t.Fatalf("status %v %q", o.Status, o.Error)
			}
			if diff := cmp.Diff(tc.want, o.Logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarningsAreBounded: the sandbox's own warnings, which come after
// the console's budget, are bounded too, however long the message of an
// unhandled rejection or the name of a step in flight. Before the fix
// each was whole: five rejections of 4 MB made 20 MB of logs, which the
// run's record keeps.
func TestWarningsAreBounded(t *testing.T) {
	e := newExecutor(t)
	for _, code := range []string{
		"for (let i = 0; i < 5; i++) Promise.reject(new Error('x'.repeat(4e6)));\n'ok'",
		"for (let i = 0; i < 5; i++) codemode.step(i + 'x'.repeat(4e6), () => 1).catch(() => {});\n'ok'",
	} {
		// A step's lookup that never answers: the steps are in flight
		// when the program returns.
		h := &sandboxtest.Host{OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
			<-ctx.Done()
			return nil, false, ctx.Err()
		}}
		o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
		sandboxtest.WantCompleted(t, code, o, `"ok"`)
		size := 0
		for _, l := range o.Logs {
			size += len(l)
		}
		if size > 64<<10 || len(o.Logs) == 0 {
			t.Errorf("%.40s…: %d log lines, %d bytes, want warnings of at most 64 KiB", code, len(o.Logs), size)
		}
	}
}

func TestConsoleTruncation(t *testing.T) {
	e := newExecutor(t)
	code := "for (const s of ['12345', '67890', 'abc', 'd']) console.log(s); 'ok'"
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{MaxLogBytes: 10})
	sandboxtest.WantCompleted(t, code, o, `"ok"`)
	want := []string{"12345", "67890", "… 2 more log lines truncated"}
	if diff := cmp.Diff(want, o.Logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name string
		code string
		want string // Outcome.Error
	}{
		{"thrown Error", "throw new Error('boom')", "Error: boom (line 1:7)"},
		{"thrown TypeError in arrow", "async () => {\n  throw new TypeError('bad arg');\n}", "TypeError: bad arg (line 2:9)"},
		{"custom error class", "class MyError extends Error { constructor(m) { super(m); this.name = 'MyError' } }\nthrow new MyError('mine')", "MyError: mine (line 1:48)"},
		{"thrown string", "throw 'x'", `Uncaught "x"`},
		{"thrown object", "throw {a: 1}", `Uncaught {"a":1}`},
		{"thrown number", "throw 42", "Uncaught 42"},
		{"rejected promise", "await Promise.reject(new RangeError('r'))", "RangeError: r (line 1:22)"},
		{"engine TypeError after await in a nested function",
			"const r = await notes.createNote({});\nfunction f(o) {\n  return o.missing.deeper;\n}\nf(r)",
			"TypeError: Cannot read property 'deeper' of undefined (line 3:20)"},
		{"runtime error in fenced TypeScript",
			"```ts\ninterface Box { v: number }\nasync () => {\n  const b = await notes.createNote({}) as any;\n  throw new Error(`bad ${b.seq}`);\n}\n```",
			"Error: bad 1 (line 5:9)"},
		{"result not JSON", "10n", "the program's value cannot be converted to JSON: TypeError: Do not know how to serialize a BigInt"},
		{"timer callback throws", "setTimeout(() => { throw new Error('in timer') }, 0);\nawait new Promise(r => setTimeout(r, 200));",
			"Error: in timer (line 1:26)"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{})
			if o.Status != sandbox.Failed {
				t.Fatalf("status %v, result %s, want failed", o.Status, o.Result)
			}
			if o.Error != tc.want {
				t.Errorf("error %q\nwant  %q", o.Error, tc.want)
			}
		})
	}
}

func TestResultValues(t *testing.T) {
	tests := []struct{ code, want string }{
		{"undefined", "null"},
		{"const f = () => 1; f", "null"},
		{"new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"({a: undefined, b: [undefined], c: 'x'})", `{"b":[null],"c":"x"}`},
		{"'héllo 😀'", `"héllo 😀"`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{}), tc.want)
	}
}

func TestTimeoutBusyLoopThenNextRunWorks(t *testing.T) {
	e := newExecutor(t)
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, "for (let i = 0; ; i++) {}", sandbox.Limits{Timeout: 200 * time.Millisecond})
	if o.Status != sandbox.Failed || o.Error != "timed out after 200ms" {
		t.Fatalf("outcome %v %q, want failed: timed out after 200ms", o.Status, o.Error)
	}
	sandboxtest.WantCompleted(t, "1 + 1", sandboxtest.Run(t, e, &sandboxtest.Host{}, "1 + 1", sandbox.Limits{}), "2")
}

func TestTimeoutNeverSettlingPromise(t *testing.T) {
	e := newExecutor(t)
	code := "await notes.createNote({}); await new Promise(() => {})"
	h := &sandboxtest.Host{}
	o := sandboxtest.Run(t, e, h, code, sandbox.Limits{Timeout: 150 * time.Millisecond})
	if o.Status != sandbox.Failed || o.Error != "timed out after 150ms" {
		t.Fatalf("outcome %v %q, want failed: timed out after 150ms", o.Status, o.Error)
	}
	if n := len(h.Calls()); n != 1 {
		t.Errorf("calls %d, want 1", n)
	}
}

func TestTimeoutCancelsHostCalls(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	o := sandboxtest.Run(t, e, h, "await notes.createNote({})", sandbox.Limits{Timeout: 100 * time.Millisecond})
	if o.Status != sandbox.Failed || o.Error != "timed out after 100ms" {
		t.Fatalf("outcome %v %q, want a timeout", o.Status, o.Error)
	}
}

func TestCancel(t *testing.T) {
	e := newExecutor(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &sandboxtest.Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) {
		cancel() // the run is under way
		return json.RawMessage(`{}`), nil
	}}
	o, err := e.Run(ctx, sandbox.Program{Code: "await notes.listNotes({});\nawait new Promise(() => {})", Globals: sandboxtest.Globals}, h)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != sandbox.Failed || o.Error != "canceled" {
		t.Fatalf("outcome %v %q, want failed: canceled", o.Status, o.Error)
	}
}

func TestStackOverflow(t *testing.T) {
	e := newExecutor(t)
	code := "function r(n) {\n  return r(n + 1) + 1;\n}\ntry { r(0) } catch (e) { 'caught' }"
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{MaxStackDepth: 200})
	if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "RangeError: maximum call stack size exceeded (line 2:") {
		t.Fatalf("outcome %v %q, want an uncatchable stack overflow at line 2", o.Status, o.Error)
	}
}

func TestMaxCalls(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{}
	code := "for (let i = 0; i < 10; i++) { try { await notes.listNotes({}) } catch (e) {} }\n'done'"
	o := sandboxtest.Run(t, e, h, code, sandbox.Limits{MaxCalls: 3})
	if o.Status != sandbox.Failed || !strings.Contains(o.Error, "call limit exceeded: a run may make at most 3 connector calls and steps") {
		t.Fatalf("outcome %v %q, want the call limit", o.Status, o.Error)
	}
	if got := len(h.Calls()); got != 3 {
		t.Errorf("host saw %d calls, want 3", got)
	}
}

// TestMaxCallsCountsUnnumberedRequests: the host requests that take no
// sequence number, codemode.search inside a step and codemode.run's
// lookups, count against the limit too. Before the fix they were
// unbounded (here 50 with a limit of 3).
func TestMaxCallsCountsUnnumberedRequests(t *testing.T) {
	e := newExecutor(t)
	for code, what := range map[string]string{
		"await codemode.step('s', async () => { for (let i = 0; i < 50; i++) await codemode.search('x') }); 'done'": "codemode.search(query)",
		"for (let i = 0; i < 50; i++) await codemode.run('nope', {}).catch(() => {}); 'done'":                       "codemode.run(nope)",
	} {
		h := &sandboxtest.Host{}
		o := sandboxtest.Run(t, e, h, code, sandbox.Limits{MaxCalls: 3})
		if want := "call limit exceeded: a run may make at most 3 connector calls and steps; " + what + " would be call 4"; o.Status != sandbox.Failed || o.Error != want {
			t.Errorf("%s: outcome %v %q, want %q", code, o.Status, o.Error, want)
		}
		if n := len(h.Log()); n != 3 {
			t.Errorf("%s: %d host requests %q, want 3", code, n, h.Log())
		}
	}
}

// TestStringArgumentsAreNotRead: an object where a string is expected
// (a step's name, a service's string parameter, a snippet's name) is
// refused without being read. Before the fix it was exported to Go
// first, which ran its getters and walked it whole, uninterruptibly: 11 s
// for an object a million levels deep, past any timeout.
func TestStringArgumentsAreNotRead(t *testing.T) {
	e := newExecutor(t)
	code := "let n = 0; const name = { get a() { n++; return 1 } };\nconst msgs = [];\nfor (const f of [() => codemode.step(name, () => 1), () => codemode.search(name), () => codemode.run(name)]) { try { await f() } catch (e) { msgs.push(e.message) } }\n[n, msgs]"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}),
		`[0, ["codemode.step(name, fn): name must be a string, got object", "codemode.search(query): query must be a string, got object", "codemode.run(name, input): name must be a string, got object"]]`)
}

// TestTooManyClockReadings: a program that reads the clock without end is
// stopped (uncatchably) with a message saying what to do, keeping the
// readings it was allowed.
func TestTooManyClockReadings(t *testing.T) {
	e := newExecutor(t)
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, "try { while (true) Date.now() } catch (e) { 'caught' }", sandbox.Limits{MaxClockReads: 5000})
	if o.Status != sandbox.Failed || !strings.Contains(o.Error, "too many clock readings") || !strings.Contains(o.Error, "more than 5000 times") || !strings.Contains(o.Error, "codemode.step") {
		t.Fatalf("outcome %v %q, want the clock limit", o.Status, o.Error)
	}
	if len(o.Clock.Times) != 5000 {
		t.Errorf("clock keeps %d readings, want 5000", len(o.Clock.Times))
	}
	// Readings inside a step are not kept, so they do not count.
	o = sandboxtest.Run(t, e, &sandboxtest.Host{}, "await codemode.step('t', () => { for (let i = 0; i < 20000; i++) Date.now(); return 1 })", sandbox.Limits{MaxClockReads: 5000})
	if o.Status != sandbox.Completed {
		t.Errorf("step reading the clock: %v %q", o.Status, o.Error)
	}
}

func TestCodeTooLarge(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{}
	o := sandboxtest.Run(t, e, h, "1 + 1 + 1 + 1", sandbox.Limits{MaxCodeBytes: 10})
	if o.Status != sandbox.Failed || o.Error != "code is too large: 13 bytes, limit 10" {
		t.Fatalf("outcome %v %q", o.Status, o.Error)
	}
}

func TestPromiseAllSeqInProgramOrder(t *testing.T) {
	e := newExecutor(t)
	for range 3 {
		var mu sync.Mutex
		var finished []int
		secondDone := make(chan struct{})
		h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
			if c.Seq == 1 {
				<-secondDone // the first call resolves last
			}
			mu.Lock()
			finished = append(finished, c.Seq)
			mu.Unlock()
			if c.Seq == 2 {
				close(secondDone)
			}
			return json.RawMessage(fmt.Sprintf(`{"seq":%d,"args":%s}`, c.Seq, c.Args)), nil
		}}
		code := "const [a, b] = await Promise.all([notes.createNote({n: 'a'}), notes.createNote({n: 'b'})]);\n[a.seq, a.args.n, b.seq, b.args.n]"
		sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `[1,"a",2,"b"]`)
		if diff := cmp.Diff([]int{2, 1}, finished); diff != "" {
			t.Errorf("host finishing order (-want +got):\n%s", diff)
		}
		byArgs := map[int]string{}
		for _, c := range h.Calls() {
			byArgs[c.Seq] = string(c.Args)
		}
		if diff := cmp.Diff(map[int]string{1: `{"n":"a"}`, 2: `{"n":"b"}`}, byArgs); diff != "" {
			t.Errorf("seq -> args (-want +got):\n%s", diff)
		}
	}
}

func TestHostStop(t *testing.T) {
	stopErr := fmt.Errorf("approval needed for notes.deleteNote: %w", sandbox.ErrStop)
	tests := []struct {
		name string
		code string
	}{
		{"caught then more calls", `
const out = [];
try { await notes.deleteNote({ id: 1 }) } catch (e) { out.push(String(e)) }
await notes.createNote({ after: true });
out`},
		{"concurrent call started later", `
await Promise.all([
  notes.deleteNote({ id: 1 }),
  new Promise(r => setTimeout(r, 30)).then(() => notes.createNote({ late: true })),
]);`},
		{"busy program is interrupted", `
notes.deleteNote({ id: 1 }).catch(() => {});
for (let i = 0; i < 1e9; i++) {}
await notes.createNote({ after: true });`},
		{"finally blocks do not run", `
try { await notes.deleteNote({ id: 1 }) } finally { await notes.createNote({ inFinally: true }) }`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
				if c.Method == "deleteNote" {
					return nil, stopErr
				}
				return json.RawMessage(`{}`), nil
			}}
			// Were the program not interrupted, it would go on to its next
			// call (which the host log would show) or time out.
			o := sandboxtest.Run(t, e, h, tc.code, sandbox.Limits{Timeout: 10 * time.Second})
			if o.Status != sandbox.Stopped || !errors.Is(o.Stop, sandbox.ErrStop) || o.Stop != stopErr {
				t.Fatalf("outcome %v stop=%v error=%q, want stopped by the host's error", o.Status, o.Stop, o.Error)
			}
			if diff := cmp.Diff([]string{"call 1 notes.deleteNote"}, h.Log()); diff != "" {
				t.Errorf("host calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLateStopDoesNotReplaceCompletion(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		<-ctx.Done() // the program returned: the call is cancelled, and stops the pass anyway
		return nil, fmt.Errorf("pause: %w", sandbox.ErrStop)
	}}
	o := sandboxtest.Run(t, e, h, "notes.deleteNote({}); 'returned'", sandbox.Limits{})
	sandboxtest.WantCompleted(t, "floating call", o, `"returned"`)
	want := []string{"[warn] 1 call was still in flight when the program returned and was cancelled: notes.deleteNote #1. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}
	if diff := cmp.Diff(want, o.Logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

func TestCallsInFlightAreCancelledWhenTheProgramEnds(t *testing.T) {
	const tick = "await new Promise(r => setTimeout(r, 20)); "
	tests := []struct {
		name    string
		code    string
		status  sandbox.Status
		logs    []string
		started int // host calls that had started: they see the cancellation
	}{
		{"returned", "notes.createNote({ floating: true }); " + tick + "1", sandbox.Completed,
			[]string{"[warn] 1 call was still in flight when the program returned and was cancelled: notes.createNote #1. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, 1},
		{"threw", "console.log('before'); notes.createNote({}); notes.deleteNote({}); " + tick + "throw new Error('x')", sandbox.Failed,
			[]string{"before", "[warn] 2 calls were still in flight when the program ended and were cancelled: notes.createNote #1, notes.deleteNote #2. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, 2},
		{"step", "codemode.step('s', () => 1); " + tick + "2", sandbox.Completed,
			[]string{`[warn] 1 call was still in flight when the program returned and was cancelled: codemode.step("s") #1. Await every call: the result of a call in flight is lost and it may or may not have taken effect.`}, 1},
		{"many, some not started", "for (let i = 0; i < 7; i++) notes.listNotes({ i }); 'x'", sandbox.Completed,
			[]string{"[warn] 7 calls were still in flight when the program returned and were cancelled: notes.listNotes #1, notes.listNotes #2, notes.listNotes #3, notes.listNotes #4, notes.listNotes #5 and 2 more. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, -1},
		{"awaited calls are not in flight", "await notes.createNote({}); 'x'", sandbox.Completed, nil, 0},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var causes []error
			block := func(ctx context.Context) error {
				<-ctx.Done()
				mu.Lock()
				causes = append(causes, context.Cause(ctx))
				mu.Unlock()
				return ctx.Err()
			}
			h := &sandboxtest.Host{
				OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
					if strings.HasPrefix(tc.code, "await") {
						return json.RawMessage(`{}`), nil
					}
					return nil, block(ctx)
				},
				OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
					return nil, false, block(ctx)
				},
			}
			// Calls in flight that were not cancelled would hold the run
			// to its timeout, and see that as their cause (checked below).
			o := sandboxtest.Run(t, e, h, tc.code, sandbox.Limits{Timeout: 10 * time.Second})
			if o.Status != tc.status {
				t.Fatalf("status %v (%s %q), want %v", o.Status, o.Result, o.Error, tc.status)
			}
			if diff := cmp.Diff(tc.logs, o.Logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			// Run returned only after every host call had returned, and each
			// saw why it was cancelled. (Calls that had not started when the
			// program ended are not made at all.)
			mu.Lock()
			defer mu.Unlock()
			for _, c := range causes {
				if !errors.Is(c, errProgramEnded) {
					t.Errorf("host call cancelled with cause %v, want errProgramEnded", c)
				}
			}
			if tc.started >= 0 && len(causes) != tc.started {
				t.Errorf("%d host calls saw their cancellation, want %d", len(causes), tc.started)
			}
		})
	}
}

func TestHostErrorIsCatchable(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		return nil, errors.New("notes: 404 not found")
	}}
	code := "try { await notes.createNote({}) } catch (e) { return [e instanceof Error, e.message] }"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `[true,"notes: 404 not found"]`)

	o := sandboxtest.Run(t, e, h, "await notes.createNote({})", sandbox.Limits{})
	if o.Status != sandbox.Failed || o.Error != "Error: notes: 404 not found (line 1:13)" {
		t.Errorf("uncaught host error: %v %q", o.Status, o.Error)
	}
}

func TestInvalidHostJSONRejects(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		return json.RawMessage(`{not json`), nil
	}}
	code := "try { await notes.createNote({}) } catch (e) { return e.message.startsWith('the host returned invalid JSON') }"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), "true")
}

func TestArguments(t *testing.T) {
	tests := []struct {
		name, code, want string
	}{
		{"no argument is {}", "(await notes.createNote()).args", "{}"},
		{"object", "(await notes.createNote({ a: [1, 'x'], b: { c: null } })).args", `{"a":[1,"x"],"b":{"c":null}}`},
		{"JSON semantics", "(await notes.createNote({ d: new Date(0), u: undefined, f() {} })).args", `{"d":"1970-01-01T00:00:00.000Z"}`},
		{"string", "try { notes.createNote('x') } catch (e) { return String(e) }", `"TypeError: notes.createNote expects one object argument, got string"`},
		{"array", "try { notes.createNote([1]) } catch (e) { return String(e) }", `"TypeError: notes.createNote expects one object argument, got array"`},
		{"null", "try { notes.createNote(null) } catch (e) { return String(e) }", `"TypeError: notes.createNote expects one object argument, got null"`},
		{"circular", "const o = {}; o.o = o; try { notes.createNote(o) } catch (e) { return e instanceof TypeError }", "true"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.Host{}
			sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, h, tc.code, sandbox.Limits{}), tc.want)
		})
	}
}

func TestArgumentErrorsTakeNoSeq(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{}
	code := "try { notes.createNote(1) } catch {}\n(await notes.createNote({})).seq"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), "1")
}

func TestUnknownMethod(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"near", "await everything.get_summ({ a: 1 })",
			"TypeError: everything.get_summ is not a function; did you mean get_sum? (line 1:18)"},
		{"far", "await everything.zzzzzzzzzzzz({})",
			"TypeError: everything.zzzzzzzzzzzz is not a function; available methods: add, echo, get_sum, get_tiny_image (line 1:18)"},
		{"caught", "try { everything.ech({}) } catch (e) { throw new Error(e.message) }",
			"Error: everything.ech is not a function; did you mean echo? (line 1:46)"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.Host{}
			o := sandboxtest.Run(t, e, h, tc.code, sandbox.Limits{})
			if o.Status != sandbox.Failed || o.Error != tc.want {
				t.Errorf("outcome %v\n got %q\nwant %q", o.Status, o.Error, tc.want)
			}
			if n := len(h.Calls()); n != 0 {
				t.Errorf("host saw %d calls", n)
			}
		})
	}
}

// TestDashedMethod: a method written as the downstream names it, with
// '-', is JavaScript subtraction; the check names the method as exposed.
func TestDashedMethod(t *testing.T) {
	e := newExecutor(t)
	const checked = "the program was checked before running and has a problem; nothing was run:\n- "
	for code, want := range map[string]string{
		"await everything.get-sum({ a: 1, b: 2 })":               checked + "line 1:18: everything.get-sum is read as everything.get - sum; did you mean everything.get_sum? method names have '-' replaced by '_'",
		"const notes2 = 1;\nconst r = everything.get-tiny-image": checked + "line 2:22: everything.get-tiny-image is read as everything.get - tiny - image; did you mean everything.get_tiny_image? method names have '-' replaced by '_'",
		// Subtraction that names no method is left alone.
		"const sum = 1; everything.get_sum - sum": "",
	} {
		h := &sandboxtest.Host{}
		o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
		if o.Error != want {
			t.Errorf("%s:\n got %q\nwant %q", code, o.Error, want)
		}
		if n := len(h.Calls()); n != 0 {
			t.Errorf("%s: host saw %d calls", code, n)
		}
	}
}

// TestTemporalDeadZone: goja's error for a const, let or class read before
// its declaration ran does not name it; the outcome does.
func TestTemporalDeadZone(t *testing.T) {
	e := newExecutor(t)
	for code, want := range map[string]string{
		"const x = y + 1;\nconst y = 2;\nx":                         "ReferenceError: Cannot access 'y' before initialization (line 1:11)",
		"f();\nlet counter = 0;\nfunction f() { return counter++ }": "ReferenceError: Cannot access 'counter' before initialization (line 3:23)",
		"const s = 'ééé' + délai; const délai = 1":                  "ReferenceError: Cannot access 'délai' before initialization (line 1:19)",
		"const n: number = later as number; const later = 1":        "ReferenceError: Cannot access 'later' before initialization (line 1:19)",
		// A name too long to echo is left out.
		"const a = " + strings.Repeat("v", 101) + "; const " + strings.Repeat("v", 101) + " = 1": "ReferenceError: Cannot access a variable before initialization (line 1:11)",
	} {
		if o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}); o.Error != want {
			t.Errorf("%s:\n got %q\nwant %q", code, o.Error, want)
		}
	}
}

func TestConnectorObjectsBehave(t *testing.T) {
	e := newExecutor(t)
	code := "const n = await Promise.resolve(notes);\n[typeof n.createNote, typeof notes.then, JSON.stringify(notes) !== undefined, 'createNote' in notes]"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}), `["function","undefined",true,true]`)
}

func TestUnknownGlobal(t *testing.T) {
	e := newExecutor(t)
	// Written out, a misspelt connector is found before the program runs.
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, "await notes.listNotes({});\nawait notse.createNote({})", sandbox.Limits{})
	want := "the program was checked before running and has a problem; nothing was run:\n- line 2:7: notse is not defined; did you mean notes?"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
	// Reached otherwise, it is a ReferenceError that says the same.
	o = sandboxtest.Run(t, e, &sandboxtest.Host{}, "const m = 'createNote';\nawait notse[m]({})", sandbox.Limits{})
	want = "ReferenceError: notse is not defined (line 2:7); did you mean notes? Available globals: notes, everything, codemode"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
	o = sandboxtest.Run(t, e, &sandboxtest.Host{}, "github.listIssues({})", sandbox.Limits{})
	want = "ReferenceError: github is not defined (line 1:1); available globals: notes, everything, codemode"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
}

func TestNoHostAccess(t *testing.T) {
	e := newExecutor(t)
	code := `[typeof require, typeof process, typeof fetch, typeof setImmediate, typeof module, typeof XMLHttpRequest,
typeof setTimeout, typeof clearTimeout, eval('1 + 1'), Function('return 3')(), eval('4\n//# sourceMappingURL=/etc/passwd')]`
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}),
		`["undefined","undefined","undefined","undefined","undefined","undefined","function","function",2,3,4]`)
}

// TestHostFunctionsLookNative: a host function's name and toString() are
// a built-in's, not the Go symbol goja would give them.
func TestHostFunctionsLookNative(t *testing.T) {
	e := newExecutor(t)
	code := `const fns = [setTimeout, setInterval, clearTimeout, console.log, console.error, codemode.step, codemode.search, everything.nope];
const d = Object.getOwnPropertyDescriptor(setTimeout, "name");
[...fns.map(f => f.name + " " + String(f)), d.writable, d.enumerable, d.configurable]`
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}), `[
"setTimeout function setTimeout() { [native code] }", "setInterval function setInterval() { [native code] }",
"clearTimeout function clearTimeout() { [native code] }", "log function log() { [native code] }",
"error function error() { [native code] }", "step function step() { [native code] }",
"search function search() { [native code] }", "nope function nope() { [native code] }",
false, false, true]`)
	// A method a forwarding connector does not list.
	code = "String(weather.tomorrow)"
	o, err := e.Run(t.Context(), sandbox.Program{Code: code, Globals: []sandbox.Global{{Name: "weather", Methods: []string{"today"}, Forward: true}}}, &sandboxtest.Host{})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.WantCompleted(t, code, o, `"function tomorrow() { [native code] }"`)
}

// TestConnectorMethodsShowNoGoSymbol: a connector method's Go function,
// read through its property descriptor or seen in an error's stack, is
// named as a built-in would be, not by its Go symbol.
func TestConnectorMethodsShowNoGoSymbol(t *testing.T) {
	e := newExecutor(t)
	code := `const d = Object.getOwnPropertyDescriptor(notes, "createNote").value;
const frames = [];
for (const f of [notes.createNote, d]) {
  try { f(1) } catch (e) { frames.push(e.stack.split("\n")[1].trim()) }
}
[d.name, String(d), ...frames]`
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}),
		`["createNote", "function createNote() { [native code] }", "at call (native)", "at createNote (native)"]`)
}

// TestTimeoutCountsNormalising: normalising counts against the timeout, as
// the worker's parent counts it. A MiB of code nested 31 levels takes
// esbuild seconds (36 MB of indented output), which cannot be interrupted;
// the program itself runs in milliseconds. Before, the timeout started once
// the code was normalised and the program completed.
func TestTimeoutCountsNormalising(t *testing.T) {
	e := newExecutor(t)
	head, tail := "var a;\n"+strings.Repeat("{", source.MaxNesting-1), strings.Repeat("}", source.MaxNesting-1)+"\n'done'"
	code := head + strings.Repeat("a\n", (sandbox.DefaultMaxCodeBytes-len(head)-len(tail))/2) + tail
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{Timeout: 400 * time.Millisecond})
	if o.Status != sandbox.Failed || o.Error != "timed out after 400ms" {
		t.Errorf("outcome %v %q %.20s, want timed out after 400ms", o.Status, o.Error, o.Result)
	}
}

func TestTimers(t *testing.T) {
	e := newExecutor(t)
	code := `
const order = [];
const id = setTimeout(() => order.push('cleared'), 10);
clearTimeout(id);
let n = 0;
await new Promise(resolve => {
  const iv = setInterval(() => { n++; if (n === 3) { clearInterval(iv); resolve(); } }, 1);
});
await new Promise(r => setTimeout(r, 30, 'arg'));
order.push('n=' + n);
order`
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{}), `["n=3"]`)
}

// TestAClearedTimerDoesNotRun: a timer cleared by the program never runs
// its callback again, even when its tick is already waiting to be run
// (goja_nodejs clears on a later turn of its loop; a tick that came during a
// long callback could win that race: TestTimers once counted n=4 after
// clearInterval at n=3). Each round busies its callback past the 1 ms tick
// before clearing, so the tick is waiting; the loop picks between it and the
// clear at random.
func TestAClearedTimerDoesNotRun(t *testing.T) {
	e := newExecutor(t)
	code := `
let extra = 0;
const busy = () => { let x = 0; for (let i = 0; i < 10000; i++) x += i; return x; };
for (let k = 0; k < 20; k++) {
  await new Promise(resolve => {
    let calls = 0;
    const iv = setInterval(() => { if (++calls > 1) extra++; busy(); clearInterval(iv); setTimeout(resolve, 3); }, 1);
  });
  await new Promise(resolve => {
    const t = setTimeout(() => extra++, 1);
    busy();
    clearTimeout(t);
    setTimeout(resolve, 3);
  });
}
extra`
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{Timeout: time.Minute}), `0`)
}

func TestSearchAndDescribe(t *testing.T) {
	e := newExecutor(t)
	h := &sandboxtest.Host{OnSearch: func(ctx context.Context, q string) (json.RawMessage, error) {
		return json.RawMessage(`{"results":[{"path":"notes.createNote","score":1}],"total":1,"q":` + fmt.Sprintf("%q", q) + `}`), nil
	}}
	code := "const s = await codemode.search('create'); const d = await codemode.describe('notes.createNote'); [s.total, s.q, d.path]"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `[1,"create","notes.createNote"]`)
	if o := sandboxtest.Run(t, e, h, "codemode.search(1)", sandbox.Limits{}); o.Status != sandbox.Failed || !strings.Contains(o.Error, "query must be a string") {
		t.Errorf("non-string query: %v %q", o.Status, o.Error)
	}
}

func TestStep(t *testing.T) {
	t.Run("first pass records the JSON value", func(t *testing.T) {
		e := newExecutor(t)
		h := &sandboxtest.Host{}
		code := "const v = await codemode.step('now', () => ({ d: new Date(0), u: undefined, n: 1 }));\nv"
		sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `{"d":"1970-01-01T00:00:00.000Z","n":1}`)
		want := []sandboxtest.StepRecord{{Step: sandbox.Step{Seq: 1, Name: "now"}, Value: `{"d":"1970-01-01T00:00:00.000Z","n":1}`}}
		if diff := cmp.Diff(want, h.Steps()); diff != "" {
			t.Errorf("StepDone (-want +got):\n%s", diff)
		}
	})
	t.Run("replay returns the recorded value without running fn", func(t *testing.T) {
		e := newExecutor(t)
		h := &sandboxtest.Host{OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
			return json.RawMessage(`{"v":42}`), true, nil
		}}
		code := "let ran = false;\nconst v = await codemode.step('rand', () => { ran = true; console.log('ran'); return Math.random() });\n[v, ran]"
		o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
		sandboxtest.WantCompleted(t, code, o, `[{"v":42},false]`)
		if len(o.Logs) != 0 || len(h.Steps()) != 0 {
			t.Errorf("fn ran on replay: logs %q, StepDone %v", o.Logs, h.Steps())
		}
	})
	t.Run("host calls inside a step throw, also after an await, in a timer or a thenable", func(t *testing.T) {
		e := newExecutor(t)
		for _, body := range []string{
			"() => notes.createNote({})",
			"async () => { await null; return notes.createNote({}) }",
			"() => new Promise(r => setTimeout(r, 1)).then(() => notes.createNote({}))",
			"() => codemode.step('inner', () => 1)",
			"() => codemode.run('s', {})",
			// A thenable's then runs in a job goja does not tell the
			// async context tracker about.
			"() => ({ then(r) { r(notes.createNote({})) } })",
			"async () => { await { then(r) { r(notes.createNote({})) } } }",
			"async () => { await null; await { then(r) { r(notes.createNote({})) } } }",
			"async () => { await null; return { then(r) { r(notes.createNote({})) } } }",
			"() => Promise.resolve().then(() => ({ get then() { return notes.createNote({}) } }))",
			// The value's toJSON runs in the step's settlement.
			"() => ({ toJSON() { notes.createNote({}); return 1 } })",
			"async () => { await null; return { toJSON() { notes.createNote({}); return 1 } } }",
		} {
			h := &sandboxtest.Host{}
			code := "let msg;\ntry { await codemode.step('s', " + body + ") } catch (e) { msg = e.message }\nconst after = await notes.listNotes({});\n[msg, after.seq]"
			o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
			var got []any
			if o.Status != sandbox.Completed || json.Unmarshal(o.Result, &got) != nil || len(got) != 2 {
				t.Fatalf("%s: outcome %v %s %q", body, o.Status, o.Result, o.Error)
			}
			if msg, _ := got[0].(string); !strings.Contains(msg, `cannot be called inside codemode.step("s")`) {
				t.Errorf("%s: message %q", body, got[0])
			}
			if got[1] != 2.0 {
				t.Errorf("%s: the call after the step has seq %v, want 2", body, got[1])
			}
			if n := len(h.Calls()); n != 1 {
				t.Errorf("%s: host saw %d calls, want 1", body, n)
			}
		}
	})
	t.Run("thenables outside a step call connectors", func(t *testing.T) {
		e := newExecutor(t)
		h := &sandboxtest.Host{}
		code := "const t = { then(r) { r(notes.createNote({})) } };\nawait codemode.step('s', () => 1);\nconst a = await t;\nawait null;\nconst b = await t;\n[a.seq, b.seq]"
		sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `[2, 3]`)
	})
	t.Run("clock and randomness inside a step do not shift the replay", func(t *testing.T) {
		e := newExecutor(t)
		code := "const s = await codemode.step('s', async () => { await null; return [Date.now(), Math.random()] });\n[Date.now(), Math.random()]"
		first, err := e.Run(context.Background(), sandbox.Program{Code: code, Clock: sandbox.Clock{Seed: 3}}, &sandboxtest.Host{})
		if err != nil || first.Status != sandbox.Completed {
			t.Fatalf("first pass: %v %v %q", err, first.Status, first.Error)
		}
		if len(first.Clock.Times) != 1 {
			t.Errorf("clock times %v: the step's read was recorded", first.Clock.Times)
		}
		h := &sandboxtest.Host{OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
			return json.RawMessage(`[1, 0.5]`), true, nil
		}}
		replay, err := e.Run(context.Background(), sandbox.Program{Code: code, Clock: first.Clock}, h)
		if err != nil || replay.Status != sandbox.Completed {
			t.Fatalf("replay: %v %v %q", err, replay.Status, replay.Error)
		}
		if string(replay.Result) != string(first.Result) {
			t.Errorf("replay %s, first pass %s", replay.Result, first.Result)
		}
	})
	t.Run("throwing fn records the failure and rejects", func(t *testing.T) {
		e := newExecutor(t)
		h := &sandboxtest.Host{}
		code := "try { await codemode.step('bad', () => { throw new TypeError('nope') }) } catch (e) { return e.message }"
		sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), `"nope"`)
		want := []sandboxtest.StepRecord{{Step: sandbox.Step{Seq: 1, Name: "bad"}, ErrMsg: "TypeError: nope"}}
		if diff := cmp.Diff(want, h.Steps()); diff != "" {
			t.Errorf("StepDone (-want +got):\n%s", diff)
		}
	})
	t.Run("stop from StepResult", func(t *testing.T) {
		e := newExecutor(t)
		h := &sandboxtest.Host{OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
			return nil, false, fmt.Errorf("diverged: %w", sandbox.ErrStop)
		}}
		o := sandboxtest.Run(t, e, h, "try { await codemode.step('x', () => 1) } catch {}\nawait notes.createNote({})", sandbox.Limits{})
		if o.Status != sandbox.Stopped || len(h.Calls()) != 0 || len(h.Steps()) != 0 {
			t.Errorf("outcome %v, calls %v, steps %v", o.Status, h.Calls(), h.Steps())
		}
	})
}

func TestSnippets(t *testing.T) {
	snippets := map[string]string{
		"double": "async (input) => {\n  const a = await notes.createNote({ n: input.n });\n  return a.args.n * 2;\n}",
		"broken": "const = 1",
		"throws": "async (input) => {\n  throw new Error('snip');\n}",
	}
	h := &sandboxtest.Host{OnSnippet: func(ctx context.Context, name string, _ json.RawMessage) (string, error) {
		code, ok := snippets[name]
		if !ok {
			return "", fmt.Errorf("no snippet %q", name)
		}
		return code, nil
	}}
	e := newExecutor(t)
	code := "await notes.listNotes({});\nconst d = await codemode.run('double', { n: 21 });\nconst last = await notes.listNotes({});\n[d, last.seq]"
	sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), "[42,3]")
	want := []string{"call 1 notes.listNotes", "snippet double", "call 2 notes.createNote", "call 3 notes.listNotes"}
	if diff := cmp.Diff(want, h.Log()); diff != "" {
		t.Errorf("host log (-want +got):\n%s", diff)
	}
	// The host gets the input as JSON (null when there is none), to check
	// it against the snippet's input schema.
	sandboxtest.Run(t, e, h, "try { await codemode.run('missing') } catch {}\ntry { await codemode.run('missing', { d: new Date(0), u: undefined }) } catch {}", sandbox.Limits{})
	if diff := cmp.Diff([]string{`{"n":21}`, "null", `{"d":"1970-01-01T00:00:00.000Z"}`}, h.SnippetInputs()); diff != "" {
		t.Errorf("snippet inputs (-want +got):\n%s", diff)
	}

	code = "try { await codemode.run('broken', {}) } catch (e) { return e.message }"
	o := sandboxtest.Run(t, e, h, code, sandbox.Limits{})
	if o.Status != sandbox.Completed || !strings.HasPrefix(string(o.Result), `"snippet broken: SyntaxError: `) || !strings.Contains(string(o.Result), "(line 1:") {
		t.Errorf("broken snippet: %v %s %q", o.Status, o.Result, o.Error)
	}
	o = sandboxtest.Run(t, e, h, "await codemode.run('throws', {})", sandbox.Limits{})
	if o.Status != sandbox.Failed || o.Error != "Error: snip (snippet throws line 2:9)" {
		t.Errorf("throwing snippet: %v %q", o.Status, o.Error)
	}
	o = sandboxtest.Run(t, e, h, "await codemode.run('missing', {})", sandbox.Limits{})
	if o.Status != sandbox.Failed || o.Error != `Error: no snippet "missing"` {
		t.Errorf("missing snippet: %v %q", o.Status, o.Error)
	}
}

func TestClockReplay(t *testing.T) {
	e := newExecutor(t)
	code := "const r = [Math.random(), Math.random()];\nconst d = [Date.now(), new Date().getTime()];\nawait notes.createNote({});\n[r, d, Date.now(), typeof Date()]"
	run := func(c sandbox.Clock) sandbox.Outcome {
		o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals, Clock: c}, &sandboxtest.Host{})
		if err != nil || o.Status != sandbox.Completed {
			t.Fatalf("Run: %v %v %q", err, o.Status, o.Error)
		}
		return o
	}
	first := run(sandbox.Clock{Seed: 7})
	if first.Clock.Seed != 7 || len(first.Clock.Times) != 4 {
		t.Fatalf("clock %+v, want seed 7 and 4 time reads", first.Clock)
	}
	replay := run(first.Clock)
	if string(replay.Result) != string(first.Result) {
		t.Errorf("replay result %s, first pass %s", replay.Result, first.Result)
	}
	if diff := cmp.Diff(first.Clock, replay.Clock); diff != "" {
		t.Errorf("replay clock (-first +replay):\n%s", diff)
	}
	// A clock recorded an hour ago replays its own times, not the
	// present's.
	past := sandbox.Clock{Seed: 7}
	for _, ms := range first.Clock.Times {
		past.Times = append(past.Times, ms-3_600_000)
	}
	var want, got [4]json.RawMessage
	if err := json.Unmarshal(first.Result, &want); err != nil {
		t.Fatal(err)
	}
	want[1], _ = json.Marshal(past.Times[:2])
	want[2], _ = json.Marshal(past.Times[2])
	if err := json.Unmarshal(run(past).Result, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replay of a past clock (-want +got):\n%s", diff)
	}
	other := run(sandbox.Clock{Seed: 8})
	var a, b [3]json.RawMessage
	if err := json.Unmarshal(first.Result, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(other.Result, &b); err != nil {
		t.Fatal(err)
	}
	if string(a[0]) == string(b[0]) {
		t.Errorf("seeds 7 and 8 drew the same numbers %s", a[0])
	}

	// A recorded prefix is replayed, later reads are appended.
	o, err := e.Run(context.Background(), sandbox.Program{Code: "[Date.now(), Date.now(), Date.now() > 1e12]", Clock: sandbox.Clock{Seed: 1, Times: []int64{1000, 2000}}}, &sandboxtest.Host{})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.WantCompleted(t, "prefix", o, "[1000,2000,true]")
	if len(o.Clock.Times) != 3 || o.Clock.Times[0] != 1000 || o.Clock.Times[1] != 2000 {
		t.Errorf("clock %+v", o.Clock)
	}
}

func TestConcurrentRuns(t *testing.T) {
	e := newExecutor(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			code := fmt.Sprintf("const xs = await Promise.all([1, 2, 3].map(n => everything.add({ n: n * %d })));\nxs.map(x => x.args.n)", i)
			o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals}, &sandboxtest.Host{})
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("[%d,%d,%d]", i, 2*i, 3*i); o.Status != sandbox.Completed || string(o.Result) != want {
				errs <- fmt.Errorf("run %d: %v %s %q, want %s", i, o.Status, o.Result, o.Error, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClose(t *testing.T) {
	sandboxtest.CloseDuringRun(t, NewInProcess(InProcessOptions{}), "await new Promise(() => {})")
}

func TestBadGlobalsAreInternalErrors(t *testing.T) {
	e := newExecutor(t)
	for _, g := range [][]sandbox.Global{
		{{Name: "codemode"}},
		{{Name: "a"}, {Name: "a"}},
	} {
		if _, err := e.Run(context.Background(), sandbox.Program{Code: "1", Globals: g}, &sandboxtest.Host{}); err == nil {
			t.Errorf("globals %v: no error", g)
		}
	}
}

// A host call's error arrives after the code that made the call has moved
// on: its Error still says where the call was made (also in e.stack), in
// the program or in a snippet.
func TestHostCallErrorLocations(t *testing.T) {
	h := &sandboxtest.Host{
		OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
			return nil, errors.New("downstream said no")
		},
		OnSnippet: func(ctx context.Context, name string, _ json.RawMessage) (string, error) {
			return "async () => {\n  return await notes.createNote({});\n}", nil
		},
	}
	tests := []struct{ name, code, want string }{
		{"awaited", "const a = 1;\nawait everything.echo({ a })", "Error: downstream said no (line 2:18)"},
		{"in a function", "async function f() {\n  return await notes.createNote({});\n}\nawait f()", "Error: downstream said no (line 2:22)"},
		{"in Promise.all", "await Promise.all([\n  notes.listNotes({}),\n])", "Error: downstream said no (line 2:9)"},
		{"in a snippet", "await codemode.run('s')", "Error: downstream said no (snippet s line 2:22)"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := sandboxtest.Run(t, e, h, tc.code, sandbox.Limits{})
			if o.Status != sandbox.Failed || o.Error != tc.want {
				t.Errorf("outcome %v %q\nwant %q", o.Status, o.Error, tc.want)
			}
		})
	}
	o := sandboxtest.Run(t, e, h, "try {\n  await everything.echo({})\n} catch (e) { return e.stack }", sandbox.Limits{})
	if o.Status != sandbox.Completed || !strings.Contains(string(o.Result), "at program.js:") {
		t.Errorf("e.stack = %s (%v %q), want the frame of the program that made the call", o.Result, o.Status, o.Error)
	}
}

// envLocalTimeChild makes TestLocalTimeIsUTC run its program: the local
// zone is read once per process, so each TZ needs a process of its own.
const envLocalTimeChild = "CODEMODE_TEST_LOCAL_TIME_CHILD"

// TestLocalTimeIsUTC: Date shows local time as UTC whatever the server's
// TZ, so a replay after a restart under another zone sees what the first
// pass saw.
func TestLocalTimeIsUTC(t *testing.T) {
	if os.Getenv(envLocalTimeChild) != "" {
		o := sandboxtest.Run(t, newExecutor(t), &sandboxtest.Host{}, sandboxtest.LocalTime, sandbox.Limits{})
		sandboxtest.WantCompleted(t, os.Getenv("TZ"), o, sandboxtest.LocalTimeUTC)
		return
	}
	for _, tz := range []string{"Asia/Kolkata", "America/New_York"} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestLocalTimeIsUTC$", "-test.v")
		cmd.Env = append(os.Environ(), "TZ="+tz, envLocalTimeChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestLocalTimeIsUTC") {
			t.Errorf("TZ=%s: %v\n%s", tz, err, out)
		}
	}
}
