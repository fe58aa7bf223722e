package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// hostileMemoryLimit is the workers' memory limit in the hostile suite:
// small, so that bombs go off quickly even under the race detector.
const hostileMemoryLimit = 64 << 20

// maxRSS is what the test process and all its workers may use together.
const maxRSS = 1 << 30

// A hostileCase is a program written to hurt: it must end as an error
// outcome (or a correct result), and the executor must run the next
// program normally.
type hostileCase struct {
	name   string
	code   string
	limits sandbox.Limits
	host   func() sandbox.Host // nil: a sandboxtest.Host
	// processOnly: the program would take an in-process executor, or the
	// whole server, down (or hang it): memory bombs, native recursion that
	// overflows Go's stack, a regular expression that never yields.
	processOnly bool
	check       func(t *testing.T, o sandbox.Outcome)
}

func failsWith(msg string) func(*testing.T, sandbox.Outcome) {
	return func(t *testing.T, o sandbox.Outcome) {
		t.Helper()
		if o.Status != sandbox.Failed || o.Error != msg {
			t.Errorf("outcome %v %q (result %.80s), want failed: %q", o.Status, o.Error, o.Result, msg)
		}
	}
}

func failsWithPrefix(prefix string) func(*testing.T, sandbox.Outcome) {
	return func(t *testing.T, o sandbox.Outcome) {
		t.Helper()
		if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, prefix) {
			t.Errorf("outcome %v %q (result %.80s), want failed: %q…", o.Status, o.Error, o.Result, prefix)
		}
	}
}

func completes(result string, logs ...string) func(*testing.T, sandbox.Outcome) {
	return func(t *testing.T, o sandbox.Outcome) {
		t.Helper()
		if o.Status != sandbox.Completed {
			t.Fatalf("outcome %v %q, want completed", o.Status, o.Error)
		}
		if !sandboxtest.JSONEqual(t, o.Result, result) {
			t.Errorf("result %s, want %s", o.Result, result)
		}
		if diff := cmp.Diff(logs, o.Logs); len(logs) > 0 && diff != "" {
			t.Errorf("logs (-want +got):\n%s", diff)
		}
	}
}

var memoryExceeded = failsWith(fmt.Sprintf("memory limit exceeded (%d MiB)", hostileMemoryLimit>>20))

func hostileCases() []hostileCase {
	short := sandbox.Limits{Timeout: 300 * time.Millisecond}
	// Memory bombs get a long timeout: the memory limit must stop them.
	// Under the race detector, with the sampling limiter, a huge
	// allocation takes tens of seconds (the detector prepares its shadow
	// of it) before anything can stop it.
	long := sandbox.Limits{Timeout: 90 * time.Second}
	stackOverflow := failsWithPrefix("RangeError: maximum call stack size exceeded (line ")
	return []hostileCase{
		{name: "memory: growing array of strings", code: "let a = []; while (true) a.push('x'.repeat(1e6))", limits: long, processOnly: true, check: memoryExceeded},
		// The heap watchdog interrupts this one cleanly: the worker
		// survives to report the logs.
		{name: "memory: growing array of objects", code: "console.log('before'); let a = []; while (true) a.push({ i: a.length, s: 'abc' + a.length })", limits: long, processOnly: true,
			check: func(t *testing.T, o sandbox.Outcome) {
				memoryExceeded(t, o)
				if diff := cmp.Diff([]string{"before"}, o.Logs); diff != "" {
					t.Errorf("logs (-want +got):\n%s", diff)
				}
			}},
		{name: "memory: doubling string", code: "let s = 'x'; while (true) s += s", limits: long, processOnly: true, check: memoryExceeded},
		{name: "memory: one huge string", code: "'x'.repeat(2 ** 31)", limits: long, processOnly: true, check: memoryExceeded},
		{name: "memory: one huge array", code: "new Array(3e8).fill(0)", limits: long, processOnly: true, check: memoryExceeded},
		// In process these overflow Go's 1 GB stack: a fatal error no
		// recover can catch, which would end the server.
		{name: "native recursion: String of a deep array", code: "let a = []; for (let i = 0; i < 1e6; i++) a = [a]; String(a).length", limits: long, processOnly: true, check: memoryExceeded},
		{name: "native recursion: eval of deep nesting", code: "eval('['.repeat(1e7))", limits: long, processOnly: true, check: memoryExceeded},
		// Quadratic in goja's Go code, which never checks the VM's
		// interrupt (the compiler walks a chain's left side at each link;
		// JSON.stringify looks for a cycle through every enclosing object):
		// in process each hung the server for minutes past a 2 s timeout.
		// The chain has 30,000 links (goja compiles it in about 4 s here,
		// past the 300 ms timeout): at 100,000 the race detector's shadow
		// of the parse tree went past the worker's memory limit first.
		{name: "native loop: eval of a long chain", code: "eval('x = ' + 'a + '.repeat(3e4) + '1')", limits: short, processOnly: true, check: failsWith("timed out after 300ms")},
		{name: "native loop: JSON.stringify of a deep object", code: "let o = {}; for (let i = 0; i < 1e5; i++) o = { o }; JSON.stringify(o).length", limits: short, processOnly: true, check: failsWith("timed out after 300ms")},
		// Refused before esbuild sees it, so in process too: before,
		// esbuild's parser recursed past the stack in the worker (and, in
		// process, in the server).
		{name: "deeply nested code", code: strings.Repeat("[", 1<<20-16), limits: long, check: failsWithPrefix("SyntaxError: the code nests deeper than 32 levels")},
		// Catastrophic backtracking runs in Go without ever checking the
		// VM's interrupt: only the parent's SIGKILL ends it.
		{name: "regular expression that never yields", code: "/^(a+)+\\1$/.test('a'.repeat(40) + 'b')", limits: short, processOnly: true, check: failsWith("timed out after 300ms")},

		// Before the fix the lookups were not counted: in process they
		// were unbounded, and the pool took the worker for a broken one
		// ("sandbox worker crashed: signal: killed").
		{name: "snippet lookups past the call limit", code: "for (let i = 0; i < 50; i++) await codemode.run('nope', {}).catch(() => {}); 'done'", limits: sandbox.Limits{MaxCalls: 3},
			check: failsWith("call limit exceeded: a run may make at most 3 connector calls and steps; codemode.run(nope) would be call 4")},
		{name: "infinite loop", code: "while (true) {}", limits: short, check: failsWith("timed out after 300ms")},
		{name: "infinite loop swallowing errors", code: "for (;;) { try { for (;;) {} } catch (e) {} finally { continue } }", limits: short, check: failsWith("timed out after 300ms")},
		{name: "never-settling promise", code: "await new Promise(() => {})", limits: short, check: failsWith("timed out after 300ms")},
		{name: "interval keeping the loop alive", code: "setInterval(() => {}, 1); await new Promise(() => {})", limits: short, check: failsWith("timed out after 300ms")},
		{name: "deep recursion", code: "function f(n) { return f(n + 1) + 1 }\nf(0)", check: stackOverflow},
		{name: "deep recursion caught and retried", code: "function f() { try { return f() } catch (e) { return f() } }\nf()", check: stackOverflow},
		{name: "deep async recursion", code: "async function f(n) { return await f(n + 1) }\nawait f(0)", check: stackOverflow},
		{name: "output flood", code: "for (let i = 0; i < 200000; i++) console.log('line ' + i + ' ' + 'x'.repeat(40)); 'done'", check: func(t *testing.T, o sandbox.Outcome) {
			completes(`"done"`)(t, o)
			size := 0
			for _, l := range o.Logs[:len(o.Logs)-1] {
				size += len(l)
			}
			if size > sandbox.DefaultMaxLogBytes {
				t.Errorf("%d bytes of logs kept, limit %d", size, sandbox.DefaultMaxLogBytes)
			}
			if last := o.Logs[len(o.Logs)-1]; !strings.HasPrefix(last, "… ") || !strings.HasSuffix(last, " more log lines truncated") {
				t.Errorf("last log line %q, want the truncation marker", last)
			}
		}},
		{name: "huge string result", code: "'x'.repeat(5e6)", check: func(t *testing.T, o sandbox.Outcome) {
			if o.Status != sandbox.Completed || len(o.Result) != 5e6+2 {
				t.Errorf("outcome %v %q, %d bytes of result, want the 5 MB string", o.Status, o.Error, len(o.Result))
			}
		}},
		{name: "huge array result", code: "Array.from({ length: 2e5 }, (_, i) => i)", check: func(t *testing.T, o sandbox.Outcome) {
			var xs []int
			if o.Status != sandbox.Completed || json.Unmarshal(o.Result, &xs) != nil || len(xs) != 2e5 || xs[199999] != 199999 {
				t.Errorf("outcome %v %q, %d bytes of result", o.Status, o.Error, len(o.Result))
			}
		}},
		{name: "tampering: JSON", code: "JSON.stringify = () => 'x'; JSON.parse = () => 'y';\nconst r = await notes.createNote({ a: 1 });\nconsole.log({ b: 2 });\n[r.args, { c: 3 }]",
			check: completes(`[{"a":1},{"c":3}]`, `{"b":2}`)},
		{name: "tampering: Array.prototype", code: "Array.prototype.push = null; Array.prototype.pop = null; Array.prototype.includes = null;\nconst o = { n: 1 }; o.self = o; console.log(o);\n(await notes.createNote({ a: [1] })).args",
			check: completes(`{"a":[1]}`, `{"n":1,"self":"[Circular]"}`)},
		{name: "tampering: Symbol and BigInt prototypes", code: "Symbol.prototype.toString = () => 'hacked'; BigInt.prototype.toString = () => 'hacked';\nconst o = { n: 2n, a: [1n] }; o.self = o; console.log(Symbol('s'), 3n, o); 1",
			check: completes(`1`, `Symbol(s) 3n {"n":"2n","a":["1n"],"self":"[Circular]"}`)},
		{name: "tampering: toJSON on the prototypes", code: "Object.prototype.toJSON = () => 'hacked'; Array.prototype.toJSON = () => 'hacked';\nconst r = await notes.createNote({ a: [1] });\n[r.args, JSON.stringify({})]",
			check: completes(`[{"a":[1]},"\"hacked\""]`)},
		{name: "tampering: Promise", code: "const then = Promise.prototype.then; Promise.resolve = () => { throw new Error('no') }; globalThis.Promise = null;\n(await notes.createNote({ a: 1 })).args",
			check: completes(`{"a":1}`)},
		{name: "tampering: Function.prototype", code: "Function.prototype.call = null; Function.prototype.apply = null; Function.prototype.bind = null;\nconst r = await notes.createNote({});\nconsole.log([1], { a: 1 });\nr.seq",
			check: completes(`1`, `[1] {"a":1}`)},
		{name: "tampering: frozen prototypes", code: "Object.freeze(Object.prototype); Object.freeze(Array.prototype); Object.freeze(Promise.prototype);\n(await notes.createNote({})).seq",
			check: completes(`1`)},
		{name: "tampering: connectors and globals", code: "notes.createNote = null; codemode.step = null; globalThis.console = null; delete globalThis.everything; Object.setPrototypeOf(notes, null); 1",
			check: completes(`1`)},
		{name: "reaching the host", code: `[typeof this, typeof globalThis.require, typeof Function('return this')().process,
(() => { try { return typeof ({}).constructor.constructor('return process')() } catch (e) { return e.name } })(),
typeof require, typeof module, typeof exports, typeof process, typeof fetch, typeof XMLHttpRequest, typeof WebAssembly,
typeof Deno, typeof Bun, typeof __dirname, typeof setImmediate, typeof GoError === 'function' && Object.getOwnPropertyNames(GoError).length > 0]`,
			check: completes(`["object","undefined","undefined","ReferenceError","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined",true]`)},
		{name: "throw null", code: "throw null", check: failsWith("Uncaught null")},
		{name: "throw undefined", code: "throw undefined", check: failsWith("Uncaught undefined")},
		{name: "throw a symbol", code: "String = null; Symbol.prototype.toString = null; throw Symbol('s')", check: failsWith("Uncaught Symbol(s)")},
		{name: "throw a hostile proxy", code: "throw new Proxy({}, { get() { throw 1 }, ownKeys() { throw 2 }, getPrototypeOf() { throw 3 } })", check: failsWith("Uncaught [object]")},
		{name: "throw an object whose toString throws", code: "throw { toString() { throw 1 } }", check: failsWith("Uncaught {}")},
		{name: "throw an Error whose message throws", code: "Error.prototype.toString = () => { throw 1 }; Object.defineProperty(Error.prototype, 'message', { get() { throw 2 } }); throw new TypeError()",
			check: failsWith("TypeError (line 1:127)")},
		{name: "unhandled rejection", code: "Promise.reject(new Error('floating')); 'ok'",
			check: completes(`"ok"`, "[warn] unhandled promise rejection: Error: floating (line 1:16)")},
		{name: "late unhandled rejection", code: "new Promise((_, reject) => setTimeout(() => reject(new RangeError('late')), 5));\nawait new Promise(r => setTimeout(r, 50));\n'ok'",
			check: completes(`"ok"`, "[warn] unhandled promise rejection: RangeError: late (line 1:52)")},
		{name: "dropped failing call", code: "everything.echo({});\nawait new Promise(r => setTimeout(r, 50));\n'ok'",
			host: func() sandbox.Host {
				return &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
					return nil, errors.New("echo: 500")
				}}
			},
			check: completes(`"ok"`, "[warn] unhandled promise rejection: Error: echo: 500 (line 1:12)")},
	}
}

// TestHostilePrograms runs the hostile suite against the process pool and,
// where it makes sense, the in-process executor. After each program the
// executor must run another one normally; the test process and its workers
// must stay under 1 GiB of resident memory throughout.
func TestHostilePrograms(t *testing.T) {
	executors := []struct {
		name    string
		process bool
		new     func(t *testing.T) sandbox.Executor
	}{
		{"process", true, func(t *testing.T) sandbox.Executor {
			return newPool(t, Options{Size: 1, MemoryLimit: hostileMemoryLimit})
		}},
		// macOS's limiter, run here with RLIMIT_DATA off.
		{"process with the sampling limiter", true, func(t *testing.T) sandbox.Executor {
			return newPool(t, Options{Size: 1, MemoryLimit: hostileMemoryLimit, Limiter: LimiterSampling})
		}},
		{"inprocess", false, func(t *testing.T) sandbox.Executor { return newExecutor(t) }},
	}
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			e := ex.new(t)
			rss := startRSSWatch(t)
			for _, tc := range hostileCases() {
				if tc.processOnly && !ex.process {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					var h sandbox.Host = &sandboxtest.Host{}
					if tc.host != nil {
						h = tc.host()
					}
					// tc.check says why the run ended (a limit, not the
					// pass's deadline, unless that is the point).
					o, err := e.Run(context.Background(), sandbox.Program{Code: tc.code, Globals: sandboxtest.Globals, Limits: tc.limits}, h)
					if err != nil {
						t.Fatalf("internal error: %v", err)
					}
					tc.check(t, o)
					sandboxtest.WantCompleted(t, "the next run", sandboxtest.Run(t, e, &sandboxtest.Host{}, "(await notes.createNote({ n: 2 })).args.n * 21", sandbox.Limits{}), "42")
				})
			}
			if peak := rss.stop(); peak > maxRSS {
				t.Errorf("peak resident memory of the test process and its workers: %d MiB, limit %d MiB", peak>>20, maxRSS>>20)
			} else {
				t.Logf("peak resident memory of the test process and its workers: %d MiB", peak>>20)
			}
		})
	}
}

// TestHugeAllocationsAreTheMemoryLimit: one allocation far past the
// limit ends the run with "memory limit exceeded" every time. Past
// RLIMIT_DATA, Go's runtime sometimes dies of a SIGSEGV in its collector
// instead of reporting that it is out of memory (about half the runs of
// these programs, which is why each runs several times); before the fix
// that was "sandbox worker crashed: exit status 2: gs     0x0", the last
// line of the register dump.
func TestHugeAllocationsAreTheMemoryLimit(t *testing.T) {
	e := newPool(t, Options{Size: 1, MemoryLimit: hostileMemoryLimit})
	for _, code := range []string{"'x'.padStart(2 ** 30).length", "'x'.repeat(2 ** 30).length", "'x'.padEnd(2 ** 28).length"} {
		for range 4 {
			o, err := e.Run(context.Background(), sandbox.Program{Code: code, Limits: sandbox.Limits{Timeout: 90 * time.Second}}, &sandboxtest.Host{})
			if err != nil {
				t.Fatalf("%s: internal error: %v", code, err)
			}
			memoryExceeded(t, o)
		}
	}
}

// TestConcurrentRunsBothExecutors is 20 concurrent runs, each making host
// calls and computing; every one must get its own correct result.
func TestConcurrentRunsBothExecutors(t *testing.T) {
	for name, e := range map[string]sandbox.Executor{
		"process":   newPool(t, Options{}),
		"inprocess": newExecutor(t),
	} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for i := range 20 {
				wg.Go(func() {
					code := fmt.Sprintf(`const xs = await Promise.all([1, 2, 3].map(n => everything.add({ n: n * %d })));
let sum = 0; for (let k = 0; k < 1e4; k++) sum += k %% 7;
console.log('run %d');
[xs.map(x => x.args.n), sum]`, i, i)
					o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: sandboxtest.Globals}, &sandboxtest.Host{})
					if err != nil {
						errs <- err
						return
					}
					want := fmt.Sprintf("[[%d,%d,%d],29994]", i, 2*i, 3*i)
					if o.Status != sandbox.Completed || string(o.Result) != want || len(o.Logs) != 1 || o.Logs[0] != fmt.Sprintf("run %d", i) {
						errs <- fmt.Errorf("run %d: %v %s %q %q, want %s", i, o.Status, o.Result, o.Error, o.Logs, want)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// rssWatch samples the resident memory of this process and its children.
type rssWatch struct {
	stopCh chan struct{}
	done   chan struct{}
	peak   int64
}

func startRSSWatch(t testing.TB) *rssWatch {
	w := &rssWatch{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			w.peak = max(w.peak, totalRSS(t))
			select {
			case <-w.stopCh:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the peak in bytes.
func (w *rssWatch) stop() int64 {
	close(w.stopCh)
	<-w.done
	return w.peak
}

// totalRSS is the resident size of this process plus its live children.
func totalRSS(t testing.TB) int64 {
	var total int64
	for _, pid := range append([]int{os.Getpid()}, childPIDs(t)...) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
		if err != nil {
			continue // exited meanwhile
		}
		// statm: size resident shared … in pages.
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				total += pages * int64(os.Getpagesize())
			}
		}
	}
	return total
}
