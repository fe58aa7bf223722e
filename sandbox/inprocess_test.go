package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
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
			o := runCode(t, e, &fakeHost{}, tc.code, Limits{})
			if o.Status != Completed {
				t.Fatalf("status %v %q", o.Status, o.Error)
			}
			if diff := cmp.Diff(tc.want, o.Logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConsoleTruncation(t *testing.T) {
	e := newExecutor(t)
	code := "for (const s of ['12345', '67890', 'abc', 'd']) console.log(s); 'ok'"
	o := runCode(t, e, &fakeHost{}, code, Limits{MaxLogBytes: 10})
	wantCompleted(t, code, o, `"ok"`)
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
			o := runCode(t, e, &fakeHost{}, tc.code, Limits{})
			if o.Status != Failed {
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
		wantCompleted(t, tc.code, runCode(t, e, &fakeHost{}, tc.code, Limits{}), tc.want)
	}
}

func TestTimeoutBusyLoopThenNextRunWorks(t *testing.T) {
	e := newExecutor(t)
	o := runCode(t, e, &fakeHost{}, "for (let i = 0; ; i++) {}", Limits{Timeout: 200 * time.Millisecond})
	if o.Status != Failed || o.Error != "timed out after 200ms" {
		t.Fatalf("outcome %v %q, want failed: timed out after 200ms", o.Status, o.Error)
	}
	wantCompleted(t, "1 + 1", runCode(t, e, &fakeHost{}, "1 + 1", Limits{}), "2")
}

func TestTimeoutNeverSettlingPromise(t *testing.T) {
	e := newExecutor(t)
	code := "await notes.createNote({}); await new Promise(() => {})"
	o := runCode(t, e, &fakeHost{}, code, Limits{Timeout: 150 * time.Millisecond})
	if o.Status != Failed || o.Error != "timed out after 150ms" {
		t.Fatalf("outcome %v %q, want failed: timed out after 150ms", o.Status, o.Error)
	}
	if o.Calls != 1 {
		t.Errorf("calls %d, want 1", o.Calls)
	}
}

func TestTimeoutCancelsHostCalls(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	o := runCode(t, e, h, "await notes.createNote({})", Limits{Timeout: 100 * time.Millisecond})
	if o.Status != Failed || o.Error != "timed out after 100ms" {
		t.Fatalf("outcome %v %q, want a timeout", o.Status, o.Error)
	}
}

func TestCancel(t *testing.T) {
	e := newExecutor(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &fakeHost{call: func(context.Context, Call) (json.RawMessage, error) {
		cancel() // the run is under way
		return json.RawMessage(`{}`), nil
	}}
	o, err := e.Run(ctx, Program{Code: "await notes.listNotes({});\nawait new Promise(() => {})", Globals: testGlobals}, h)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Failed || o.Error != "canceled" {
		t.Fatalf("outcome %v %q, want failed: canceled", o.Status, o.Error)
	}
}

func TestStackOverflow(t *testing.T) {
	e := newExecutor(t)
	code := "function r(n) {\n  return r(n + 1) + 1;\n}\ntry { r(0) } catch (e) { 'caught' }"
	o := runCode(t, e, &fakeHost{}, code, Limits{MaxStackDepth: 200})
	if o.Status != Failed || !strings.HasPrefix(o.Error, "RangeError: maximum call stack size exceeded (line 2:") {
		t.Fatalf("outcome %v %q, want an uncatchable stack overflow at line 2", o.Status, o.Error)
	}
}

func TestMaxCalls(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{}
	code := "for (let i = 0; i < 10; i++) { try { await notes.listNotes({}) } catch (e) {} }\n'done'"
	o := runCode(t, e, h, code, Limits{MaxCalls: 3})
	if o.Status != Failed || !strings.Contains(o.Error, "call limit exceeded: a run may make at most 3 connector calls and steps") {
		t.Fatalf("outcome %v %q, want the call limit", o.Status, o.Error)
	}
	if got := len(h.recordedCalls()); got != 3 || o.Calls != 3 {
		t.Errorf("host saw %d calls, outcome counts %d; want 3", got, o.Calls)
	}
}

// TestTooManyClockReadings: a program that reads the clock without end is
// stopped (uncatchably) with a message saying what to do, keeping the
// readings it was allowed.
func TestTooManyClockReadings(t *testing.T) {
	e := newExecutor(t)
	o := runCode(t, e, &fakeHost{}, "try { while (true) Date.now() } catch (e) { 'caught' }", Limits{MaxClockReads: 5000})
	if o.Status != Failed || !strings.Contains(o.Error, "too many clock readings") || !strings.Contains(o.Error, "more than 5000 times") || !strings.Contains(o.Error, "codemode.step") {
		t.Fatalf("outcome %v %q, want the clock limit", o.Status, o.Error)
	}
	if len(o.Clock.Times) != 5000 {
		t.Errorf("clock keeps %d readings, want 5000", len(o.Clock.Times))
	}
	// Readings inside a step are not kept, so they do not count.
	o = runCode(t, e, &fakeHost{}, "await codemode.step('t', () => { for (let i = 0; i < 20000; i++) Date.now(); return 1 })", Limits{MaxClockReads: 5000})
	if o.Status != Completed {
		t.Errorf("step reading the clock: %v %q", o.Status, o.Error)
	}
}

func TestCodeTooLarge(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{}
	o := runCode(t, e, h, "1 + 1 + 1 + 1", Limits{MaxCodeBytes: 10})
	if o.Status != Failed || o.Error != "code is too large: 13 bytes, limit 10" {
		t.Fatalf("outcome %v %q", o.Status, o.Error)
	}
}

func TestPromiseAllSeqInProgramOrder(t *testing.T) {
	e := newExecutor(t)
	for range 3 {
		var mu sync.Mutex
		var finished []int
		secondDone := make(chan struct{})
		h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
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
		wantCompleted(t, code, runCode(t, e, h, code, Limits{}), `[1,"a",2,"b"]`)
		if diff := cmp.Diff([]int{2, 1}, finished); diff != "" {
			t.Errorf("host finishing order (-want +got):\n%s", diff)
		}
		byArgs := map[int]string{}
		for _, c := range h.recordedCalls() {
			byArgs[c.Seq] = string(c.Args)
		}
		if diff := cmp.Diff(map[int]string{1: `{"n":"a"}`, 2: `{"n":"b"}`}, byArgs); diff != "" {
			t.Errorf("seq -> args (-want +got):\n%s", diff)
		}
	}
}

func TestHostStop(t *testing.T) {
	stopErr := fmt.Errorf("approval needed for notes.deleteNote: %w", ErrStop)
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
			h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
				if c.Method == "deleteNote" {
					return nil, stopErr
				}
				return json.RawMessage(`{}`), nil
			}}
			// Were the program not interrupted, it would go on to its next
			// call (which the host log would show) or time out.
			o := runCode(t, e, h, tc.code, Limits{Timeout: 10 * time.Second})
			if o.Status != Stopped || !errors.Is(o.Stop, ErrStop) || o.Stop != stopErr {
				t.Fatalf("outcome %v stop=%v error=%q, want stopped by the host's error", o.Status, o.Stop, o.Error)
			}
			if diff := cmp.Diff([]string{"call 1 notes.deleteNote"}, h.recordedLog()); diff != "" {
				t.Errorf("host calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLateStopDoesNotReplaceCompletion(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
		<-ctx.Done() // the program returned: the call is cancelled, and stops the pass anyway
		return nil, fmt.Errorf("pause: %w", ErrStop)
	}}
	o := runCode(t, e, h, "notes.deleteNote({}); 'returned'", Limits{})
	wantCompleted(t, "floating call", o, `"returned"`)
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
		status  Status
		logs    []string
		started int // host calls that had started: they see the cancellation
	}{
		{"returned", "notes.createNote({ floating: true }); " + tick + "1", Completed,
			[]string{"[warn] 1 call was still in flight when the program returned and was cancelled: notes.createNote #1. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, 1},
		{"threw", "console.log('before'); notes.createNote({}); notes.deleteNote({}); " + tick + "throw new Error('x')", Failed,
			[]string{"before", "[warn] 2 calls were still in flight when the program ended and were cancelled: notes.createNote #1, notes.deleteNote #2. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, 2},
		{"step", "codemode.step('s', () => 1); " + tick + "2", Completed,
			[]string{`[warn] 1 call was still in flight when the program returned and was cancelled: codemode.step("s") #1. Await every call: the result of a call in flight is lost and it may or may not have taken effect.`}, 1},
		{"many, some not started", "for (let i = 0; i < 7; i++) notes.listNotes({ i }); 'x'", Completed,
			[]string{"[warn] 7 calls were still in flight when the program returned and were cancelled: notes.listNotes #1, notes.listNotes #2, notes.listNotes #3, notes.listNotes #4, notes.listNotes #5 and 2 more. Await every call: the result of a call in flight is lost and it may or may not have taken effect."}, -1},
		{"awaited calls are not in flight", "await notes.createNote({}); 'x'", Completed, nil, 0},
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
			h := &fakeHost{
				call: func(ctx context.Context, c Call) (json.RawMessage, error) {
					if strings.HasPrefix(tc.code, "await") {
						return json.RawMessage(`{}`), nil
					}
					return nil, block(ctx)
				},
				stepResult: func(ctx context.Context, s Step) (json.RawMessage, bool, error) { return nil, false, block(ctx) },
			}
			// Calls in flight that were not cancelled would hold the run
			// to its timeout, and see that as their cause (checked below).
			o := runCode(t, e, h, tc.code, Limits{Timeout: 10 * time.Second})
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
				if !errors.Is(c, pass.ErrProgramEnded) {
					t.Errorf("host call cancelled with cause %v, want ErrProgramEnded", c)
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
	h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
		return nil, errors.New("notes: 404 not found")
	}}
	code := "try { await notes.createNote({}) } catch (e) { return [e instanceof Error, e.message] }"
	wantCompleted(t, code, runCode(t, e, h, code, Limits{}), `[true,"notes: 404 not found"]`)

	o := runCode(t, e, h, "await notes.createNote({})", Limits{})
	if o.Status != Failed || o.Error != "Error: notes: 404 not found (line 1:13)" {
		t.Errorf("uncaught host error: %v %q", o.Status, o.Error)
	}
}

func TestInvalidHostJSONRejects(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
		return json.RawMessage(`{not json`), nil
	}}
	code := "try { await notes.createNote({}) } catch (e) { return e.message.startsWith('the host returned invalid JSON') }"
	wantCompleted(t, code, runCode(t, e, h, code, Limits{}), "true")
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
			h := &fakeHost{}
			wantCompleted(t, tc.code, runCode(t, e, h, tc.code, Limits{}), tc.want)
		})
	}
}

func TestArgumentErrorsTakeNoSeq(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{}
	code := "try { notes.createNote(1) } catch {}\n(await notes.createNote({})).seq"
	wantCompleted(t, code, runCode(t, e, h, code, Limits{}), "1")
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
			h := &fakeHost{}
			o := runCode(t, e, h, tc.code, Limits{})
			if o.Status != Failed || o.Error != tc.want {
				t.Errorf("outcome %v\n got %q\nwant %q", o.Status, o.Error, tc.want)
			}
			if n := len(h.recordedCalls()); n != 0 {
				t.Errorf("host saw %d calls", n)
			}
		})
	}
}

func TestConnectorObjectsBehave(t *testing.T) {
	e := newExecutor(t)
	code := "const n = await Promise.resolve(notes);\n[typeof n.createNote, typeof notes.then, JSON.stringify(notes) !== undefined, 'createNote' in notes]"
	wantCompleted(t, code, runCode(t, e, &fakeHost{}, code, Limits{}), `["function","undefined",true,true]`)
}

func TestUnknownGlobal(t *testing.T) {
	e := newExecutor(t)
	// Written out, a misspelt connector is found before the program runs.
	o := runCode(t, e, &fakeHost{}, "await notes.listNotes({});\nawait notse.createNote({})", Limits{})
	want := "the program was checked before running and has a problem; nothing was run:\n- line 2:7: notse is not defined; did you mean notes?"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
	// Reached otherwise, it is a ReferenceError that says the same.
	o = runCode(t, e, &fakeHost{}, "const m = 'createNote';\nawait notse[m]({})", Limits{})
	want = "ReferenceError: notse is not defined (line 2:7); did you mean notes? Available globals: notes, everything, codemode"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
	o = runCode(t, e, &fakeHost{}, "github.listIssues({})", Limits{})
	want = "ReferenceError: github is not defined (line 1:1); available globals: notes, everything, codemode"
	if o.Error != want {
		t.Errorf("error\n got %q\nwant %q", o.Error, want)
	}
}

func TestNoHostAccess(t *testing.T) {
	e := newExecutor(t)
	code := `[typeof require, typeof process, typeof fetch, typeof setImmediate, typeof module, typeof XMLHttpRequest,
typeof setTimeout, typeof clearTimeout, eval('1 + 1'), Function('return 3')(), eval('4\n//# sourceMappingURL=/etc/passwd')]`
	wantCompleted(t, code, runCode(t, e, &fakeHost{}, code, Limits{}),
		`["undefined","undefined","undefined","undefined","undefined","undefined","function","function",2,3,4]`)
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
	wantCompleted(t, code, runCode(t, e, &fakeHost{}, code, Limits{}), `["n=3"]`)
}

func TestSearchAndDescribe(t *testing.T) {
	e := newExecutor(t)
	h := &fakeHost{search: func(ctx context.Context, q string) (json.RawMessage, error) {
		return json.RawMessage(`{"results":[{"path":"notes.createNote","score":1}],"total":1,"q":` + fmt.Sprintf("%q", q) + `}`), nil
	}}
	code := "const s = await codemode.search('create'); const d = await codemode.describe('notes.createNote'); [s.total, s.q, d.path]"
	wantCompleted(t, code, runCode(t, e, h, code, Limits{}), `[1,"create","notes.createNote"]`)
	if o := runCode(t, e, h, "codemode.search(1)", Limits{}); o.Status != Failed || !strings.Contains(o.Error, "query must be a string") {
		t.Errorf("non-string query: %v %q", o.Status, o.Error)
	}
}

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
			h := &fakeHost{}
			o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals, Services: testServices}, h)
			if err != nil {
				t.Fatal(err)
			}
			wantCompleted(t, code, o, `[0,"notes","notes.listNotes"]`)
			want := []string{"call 1 notes.listNotes", "search 2 x", "describe 3 notes", "stepResult 4 s", "describe 0 notes.listNotes", "stepDone 4 s", "call 5 notes.createNote"}
			if diff := cmp.Diff(want, h.recordedLog()); diff != "" {
				t.Errorf("host log (-want +got):\n%s", diff)
			}
			if o.Calls != 5 {
				t.Errorf("Outcome.Calls = %d, want 5", o.Calls)
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
	p := Program{
		Globals:  testGlobals,
		Services: []Service{{Name: "forecast", Params: []Param{{Name: "city", String: true}, {Name: "options"}}}}, // edit 1
	}
	h := &fakeHost{service: func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) { // edit 2
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
				wantCompleted(t, tc.code, o, tc.want)
			}
		})
	}
}

func TestStep(t *testing.T) {
	t.Run("first pass records the JSON value", func(t *testing.T) {
		e := newExecutor(t)
		h := &fakeHost{}
		code := "const v = await codemode.step('now', () => ({ d: new Date(0), u: undefined, n: 1 }));\nv"
		wantCompleted(t, code, runCode(t, e, h, code, Limits{}), `{"d":"1970-01-01T00:00:00.000Z","n":1}`)
		want := []stepRecord{{Step: Step{Seq: 1, Name: "now"}, Value: `{"d":"1970-01-01T00:00:00.000Z","n":1}`}}
		if diff := cmp.Diff(want, h.recordedSteps()); diff != "" {
			t.Errorf("StepDone (-want +got):\n%s", diff)
		}
	})
	t.Run("replay returns the recorded value without running fn", func(t *testing.T) {
		e := newExecutor(t)
		h := &fakeHost{stepResult: func(ctx context.Context, s Step) (json.RawMessage, bool, error) {
			return json.RawMessage(`{"v":42}`), true, nil
		}}
		code := "let ran = false;\nconst v = await codemode.step('rand', () => { ran = true; console.log('ran'); return Math.random() });\n[v, ran]"
		o := runCode(t, e, h, code, Limits{})
		wantCompleted(t, code, o, `[{"v":42},false]`)
		if len(o.Logs) != 0 || len(h.recordedSteps()) != 0 {
			t.Errorf("fn ran on replay: logs %q, StepDone %v", o.Logs, h.recordedSteps())
		}
	})
	t.Run("host calls inside a step throw, also after an await or in a timer", func(t *testing.T) {
		e := newExecutor(t)
		for _, body := range []string{
			"() => notes.createNote({})",
			"async () => { await null; return notes.createNote({}) }",
			"() => new Promise(r => setTimeout(r, 1)).then(() => notes.createNote({}))",
			"() => codemode.step('inner', () => 1)",
			"() => codemode.run('s', {})",
		} {
			h := &fakeHost{}
			code := "let msg;\ntry { await codemode.step('s', " + body + ") } catch (e) { msg = e.message }\nconst after = await notes.listNotes({});\n[msg, after.seq]"
			o := runCode(t, e, h, code, Limits{})
			var got []any
			if o.Status != Completed || json.Unmarshal(o.Result, &got) != nil || len(got) != 2 {
				t.Fatalf("%s: outcome %v %s %q", body, o.Status, o.Result, o.Error)
			}
			if msg, _ := got[0].(string); !strings.Contains(msg, `cannot be called inside codemode.step("s")`) {
				t.Errorf("%s: message %q", body, got[0])
			}
			if got[1] != 2.0 {
				t.Errorf("%s: the call after the step has seq %v, want 2", body, got[1])
			}
			if n := len(h.recordedCalls()); n != 1 {
				t.Errorf("%s: host saw %d calls, want 1", body, n)
			}
		}
	})
	t.Run("clock and randomness inside a step do not shift the replay", func(t *testing.T) {
		e := newExecutor(t)
		code := "const s = await codemode.step('s', async () => { await null; return [Date.now(), Math.random()] });\n[Date.now(), Math.random()]"
		first, err := e.Run(context.Background(), Program{Code: code, Clock: Clock{Seed: 3}}, &fakeHost{})
		if err != nil || first.Status != Completed {
			t.Fatalf("first pass: %v %v %q", err, first.Status, first.Error)
		}
		if len(first.Clock.Times) != 1 {
			t.Errorf("clock times %v: the step's read was recorded", first.Clock.Times)
		}
		h := &fakeHost{stepResult: func(ctx context.Context, s Step) (json.RawMessage, bool, error) {
			return json.RawMessage(`[1, 0.5]`), true, nil
		}}
		replay, err := e.Run(context.Background(), Program{Code: code, Clock: first.Clock}, h)
		if err != nil || replay.Status != Completed {
			t.Fatalf("replay: %v %v %q", err, replay.Status, replay.Error)
		}
		if string(replay.Result) != string(first.Result) {
			t.Errorf("replay %s, first pass %s", replay.Result, first.Result)
		}
	})
	t.Run("throwing fn records the failure and rejects", func(t *testing.T) {
		e := newExecutor(t)
		h := &fakeHost{}
		code := "try { await codemode.step('bad', () => { throw new TypeError('nope') }) } catch (e) { return e.message }"
		wantCompleted(t, code, runCode(t, e, h, code, Limits{}), `"nope"`)
		want := []stepRecord{{Step: Step{Seq: 1, Name: "bad"}, ErrMsg: "TypeError: nope"}}
		if diff := cmp.Diff(want, h.recordedSteps()); diff != "" {
			t.Errorf("StepDone (-want +got):\n%s", diff)
		}
	})
	t.Run("stop from StepResult", func(t *testing.T) {
		e := newExecutor(t)
		h := &fakeHost{stepResult: func(ctx context.Context, s Step) (json.RawMessage, bool, error) {
			return nil, false, fmt.Errorf("diverged: %w", ErrStop)
		}}
		o := runCode(t, e, h, "try { await codemode.step('x', () => 1) } catch {}\nawait notes.createNote({})", Limits{})
		if o.Status != Stopped || len(h.recordedCalls()) != 0 || len(h.recordedSteps()) != 0 {
			t.Errorf("outcome %v, calls %v, steps %v", o.Status, h.recordedCalls(), h.recordedSteps())
		}
	})
}

func TestSnippets(t *testing.T) {
	snippets := map[string]string{
		"double": "async (input) => {\n  const a = await notes.createNote({ n: input.n });\n  return a.args.n * 2;\n}",
		"broken": "const = 1",
		"throws": "async (input) => {\n  throw new Error('snip');\n}",
	}
	h := &fakeHost{snippet: func(ctx context.Context, name string, _ json.RawMessage) (string, error) {
		code, ok := snippets[name]
		if !ok {
			return "", fmt.Errorf("no snippet %q", name)
		}
		return code, nil
	}}
	e := newExecutor(t)
	code := "await notes.listNotes({});\nconst d = await codemode.run('double', { n: 21 });\nconst last = await notes.listNotes({});\n[d, last.seq]"
	wantCompleted(t, code, runCode(t, e, h, code, Limits{}), "[42,3]")
	want := []string{"call 1 notes.listNotes", "snippet double", "call 2 notes.createNote", "call 3 notes.listNotes"}
	if diff := cmp.Diff(want, h.recordedLog()); diff != "" {
		t.Errorf("host log (-want +got):\n%s", diff)
	}
	// The host gets the input as JSON (null when there is none), to check
	// it against the snippet's input schema.
	runCode(t, e, h, "try { await codemode.run('missing') } catch {}\ntry { await codemode.run('missing', { d: new Date(0), u: undefined }) } catch {}", Limits{})
	if diff := cmp.Diff([]string{`{"n":21}`, "null", `{"d":"1970-01-01T00:00:00.000Z"}`}, h.snippetInputs); diff != "" {
		t.Errorf("snippet inputs (-want +got):\n%s", diff)
	}

	code = "try { await codemode.run('broken', {}) } catch (e) { return e.message }"
	o := runCode(t, e, h, code, Limits{})
	if o.Status != Completed || !strings.HasPrefix(string(o.Result), `"snippet broken: SyntaxError: `) || !strings.Contains(string(o.Result), "(line 1:") {
		t.Errorf("broken snippet: %v %s %q", o.Status, o.Result, o.Error)
	}
	o = runCode(t, e, h, "await codemode.run('throws', {})", Limits{})
	if o.Status != Failed || o.Error != "Error: snip (snippet throws line 2:9)" {
		t.Errorf("throwing snippet: %v %q", o.Status, o.Error)
	}
	o = runCode(t, e, h, "await codemode.run('missing', {})", Limits{})
	if o.Status != Failed || o.Error != `Error: no snippet "missing"` {
		t.Errorf("missing snippet: %v %q", o.Status, o.Error)
	}
}

func TestClockReplay(t *testing.T) {
	e := newExecutor(t)
	code := "const r = [Math.random(), Math.random()];\nconst d = [Date.now(), new Date().getTime()];\nawait notes.createNote({});\n[r, d, Date.now(), typeof Date()]"
	run := func(c Clock) Outcome {
		o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals, Clock: c}, &fakeHost{})
		if err != nil || o.Status != Completed {
			t.Fatalf("Run: %v %v %q", err, o.Status, o.Error)
		}
		return o
	}
	first := run(Clock{Seed: 7})
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
	past := Clock{Seed: 7}
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
	other := run(Clock{Seed: 8})
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
	o, err := e.Run(context.Background(), Program{Code: "[Date.now(), Date.now(), Date.now() > 1e12]", Clock: Clock{Seed: 1, Times: []int64{1000, 2000}}}, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, "prefix", o, "[1000,2000,true]")
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
			o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals}, &fakeHost{})
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("[%d,%d,%d]", i, 2*i, 3*i); o.Status != Completed || string(o.Result) != want {
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
	e := NewInProcess(InProcessOptions{})
	done := make(chan Outcome)
	started := make(chan struct{})
	h := &fakeHost{call: func(context.Context, Call) (json.RawMessage, error) {
		close(started)
		return json.RawMessage(`{}`), nil
	}}
	go func() {
		o, _ := e.Run(context.Background(), Program{Code: "await notes.listNotes({});\nawait new Promise(() => {})", Globals: testGlobals}, h)
		done <- o
	}()
	<-started // the run is under way
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if o := <-done; o.Status != Failed || o.Error != "canceled" {
		t.Errorf("run in progress at Close: %v %q", o.Status, o.Error)
	}
	if _, err := e.Run(context.Background(), Program{Code: "1"}, &fakeHost{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

func TestBadGlobalsAreInternalErrors(t *testing.T) {
	e := newExecutor(t)
	for _, g := range [][]Global{
		{{Name: "codemode"}},
		{{Name: "a"}, {Name: "a"}},
	} {
		if _, err := e.Run(context.Background(), Program{Code: "1", Globals: g}, &fakeHost{}); err == nil {
			t.Errorf("globals %v: no error", g)
		}
	}
}

// A host call's error arrives after the code that made the call has moved
// on: its Error still says where the call was made (also in e.stack), in
// the program or in a snippet.
func TestHostCallErrorLocations(t *testing.T) {
	h := &fakeHost{
		call: func(ctx context.Context, c Call) (json.RawMessage, error) {
			return nil, errors.New("downstream said no")
		},
		snippet: func(ctx context.Context, name string, _ json.RawMessage) (string, error) {
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
			o := runCode(t, e, h, tc.code, Limits{})
			if o.Status != Failed || o.Error != tc.want {
				t.Errorf("outcome %v %q\nwant %q", o.Status, o.Error, tc.want)
			}
		})
	}
	o := runCode(t, e, h, "try {\n  await everything.echo({})\n} catch (e) { return e.stack }", Limits{})
	if o.Status != Completed || !strings.Contains(string(o.Result), "at program.js:") {
		t.Errorf("e.stack = %s (%v %q), want the frame of the program that made the call", o.Result, o.Status, o.Error)
	}
}

// A connector whose downstream did not start is named in the program's
// globals as unavailable: no object is installed for it, and a program
// that uses it is told why (across the worker pipe too); the other
// connectors work.
func TestUnavailableGlobal(t *testing.T) {
	globals := append(slices.Clone(testGlobals), Global{Name: "down", Unavailable: "start /opt/down-server: exit status 1"})
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			run := func(code string) Outcome {
				t.Helper()
				o, err := e.Run(context.Background(), Program{Code: code, Globals: globals}, &fakeHost{})
				if err != nil {
					t.Fatalf("Run(%q): internal error: %v", code, err)
				}
				return o
			}
			o := run("await down.list({})")
			want := "ReferenceError: down is not defined (line 1:7); connector down is unavailable: start /opt/down-server: exit status 1"
			if o.Status != Failed || o.Error != want {
				t.Errorf("using it: %v %q\nwant failed %q", o.Status, o.Error, want)
			}
			o = run("const m = 'createNote';\nawait notse[m]({})")
			want = "ReferenceError: notse is not defined (line 2:7); did you mean notes? Available globals: notes, everything, codemode"
			if o.Status != Failed || o.Error != want {
				t.Errorf("a misspelt connector: %v %q\nwant failed %q (the unavailable one is not offered)", o.Status, o.Error, want)
			}
			wantCompleted(t, "typeof down", run("[typeof down, typeof notes.createNote]"), `["undefined","function"]`)
		})
	}
}

// TestCallErrorDetails: a host error with details throws an Error that
// has the details' members as properties (its own message and stack
// kept), on both executors (the process one carries them over the pipe).
func TestCallErrorDetails(t *testing.T) {
	host := func() *fakeHost {
		return &fakeHost{call: func(ctx context.Context, c Call) (json.RawMessage, error) {
			if c.Method == "deleteNote" {
				return nil, errors.New("plain failure")
			}
			return nil, &CallError{
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
			o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals}, host())
			if err != nil {
				t.Fatal(err)
			}
			wantCompleted(t, "details", o, `[true,"GET /pets/{id}: 404 Not Found: no such pet",404,"no such pet",false,["body","status"]]`)
			o, err = e.Run(context.Background(), Program{Code: `async () => { try { await notes.deleteNote({}); } catch (e) { return [e.message, e.status === undefined]; } }`, Globals: testGlobals}, host())
			if err != nil {
				t.Fatal(err)
			}
			wantCompleted(t, "plain", o, `["plain failure",true]`)
		})
	}
}
