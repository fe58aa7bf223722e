package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// newPool returns a process pool whose workers are this test binary (see
// TestMain), closed when the test ends.
func newPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Command = []string{exe}
	opts.Env = append(slices.Clone(testWorkerEnv), opts.Env...) // opts.Env may override
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	p, err := NewPool(opts)
	if err != nil {
		t.Fatalf("NewProcessPool: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// testLogWriter sends a pool's log to the test's.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// testWorkerEnv makes the test binary a worker; the race detector's
// default one-second sleep at exit would slow every worker's stop.
var testWorkerEnv = []string{envTestWorker + "=1", "GORACE=atexit_sleep_ms=0"}

// TestProcessMatchesInProcess runs the same programs against both
// executors: the outcome must be the same, and so must what the host saw.
func TestProcessMatchesInProcess(t *testing.T) {
	stopErr := fmt.Errorf("approval needed: %w", sandbox.ErrStop)
	snippets := map[string]string{"double": "async (input) => {\n  const a = await notes.createNote({ n: input.n });\n  return a.args.n * 2;\n}"}
	newHost := func() *sandboxtest.Host {
		return &sandboxtest.Host{
			OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
				switch c.Method {
				case "deleteNote":
					return nil, stopErr
				case "echo":
					return nil, errors.New("echo: 500 downstream failure")
				case "get_tiny_image":
					return nil, nil
				}
				return json.RawMessage(fmt.Sprintf(`{"seq":%d,"args":%s}`, c.Seq, c.Args)), nil
			},
			OnStepResult: func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
				if s.Name == "recorded" {
					return json.RawMessage(`{"v":42}`), true, nil
				}
				return nil, false, nil
			},
			OnSearch: func(ctx context.Context, q string) (json.RawMessage, error) {
				return json.RawMessage(`{"total":1,"q":` + fmt.Sprintf("%q", q) + `}`), nil
			},
			OnSnippet: func(ctx context.Context, name string, input json.RawMessage) (string, error) {
				if code, ok := snippets[name]; ok {
					if !strings.Contains(string(input), `"n":`) {
						return "", fmt.Errorf("invalid input for snippet %s: %s has no n", name, input)
					}
					return code, nil
				}
				return "", fmt.Errorf("no snippet %q", name)
			},
		}
	}
	programs := []struct {
		name, code string
		limits     sandbox.Limits
	}{
		{"value", "1 + 1", sandbox.Limits{}},
		{"undefined", "undefined", sandbox.Limits{}},
		{"calls and logs", "const a = await notes.createNote({ t: 'é😀' });\nconsole.log('got', a);\nconsole.warn({ x: [1, 2] });\na", sandbox.Limits{}},
		{"promise all", "const xs = await Promise.all([1, 2, 3].map(n => everything.add({ n })));\nxs.map(x => x.seq)", sandbox.Limits{}},
		{"empty host value", "typeof (await everything.get_tiny_image({}))", sandbox.Limits{}},
		{"host error caught", "try { await everything.echo({}) } catch (e) { return [e instanceof Error, e.message] }", sandbox.Limits{}},
		{"host error uncaught", "await everything.echo({})", sandbox.Limits{}},
		{"thrown", "async () => {\n  throw new TypeError('bad');\n}", sandbox.Limits{}},
		{"syntax error", "const = 1", sandbox.Limits{}},
		{"code too large", "1 + 1 + 1", sandbox.Limits{MaxCodeBytes: 4}},
		{"stop", "try { await notes.deleteNote({}) } catch {}\nawait notes.createNote({})", sandbox.Limits{}},
		{"steps", "const r = await codemode.step('recorded', () => 1);\nconst n = await codemode.step('new', () => ({ d: new Date(0) }));\n[r, n]", sandbox.Limits{}},
		{"step throws", "try { await codemode.step('bad', () => { throw new Error('no') }) } catch (e) { return e.message }", sandbox.Limits{}},
		{"search and describe", "const s = await codemode.search('q');\nconst d = await codemode.describe('notes.createNote');\n[s, d]", sandbox.Limits{}},
		{"snippet", "await codemode.run('double', { n: 21 })", sandbox.Limits{}},
		{"missing snippet", "await codemode.run('nope', {})", sandbox.Limits{}},
		{"snippet input refused", "try { await codemode.run('double', { m: [1, 'x'] }) } catch (e) { return e.message }", sandbox.Limits{}},
		{"snippet without input", "try { await codemode.run('double') } catch (e) { return e.message }", sandbox.Limits{}},
		{"clock", "[Math.random(), typeof Date.now()]", sandbox.Limits{}},
		{"local time", "[new Date(0).toString(), new Date(0).getTimezoneOffset(), new Date(0).toLocaleString()]", sandbox.Limits{}},
		{"call limit", "for (let i = 0; i < 5; i++) await notes.listNotes({})", sandbox.Limits{MaxCalls: 2}},
		{"clock limit", "try { for (;;) Date.now() } catch (e) { return 'caught' }", sandbox.Limits{MaxClockReads: 1000}},
		{"log limit", "for (let i = 0; i < 100; i++) console.log('line', i); 'ok'", sandbox.Limits{MaxLogBytes: 50}},
		{"stack overflow", "function r() { return r() + 1 }\nr()", sandbox.Limits{MaxStackDepth: 100}},
		{"timeout", "while (true) {}", sandbox.Limits{Timeout: 100 * time.Millisecond}},
		{"floating call", "notes.createNote({}); await new Promise(r => setTimeout(r, 20)); 'done'", sandbox.Limits{}},
	}
	inproc := newExecutor(t)
	pool := newPool(t, Options{Size: 1})
	// Floating calls block until cancelled, so that both executors see them
	// in flight.
	block := func(h *sandboxtest.Host) {
		inner := h.OnCall
		h.OnCall = func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
			if c.Method == "createNote" && string(c.Args) == "{}" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return inner(ctx, c)
		}
	}
	for _, tc := range programs {
		t.Run(tc.name, func(t *testing.T) {
			prog := sandbox.Program{Code: tc.code, Globals: sandboxtest.Globals, Limits: tc.limits, Clock: sandbox.Clock{Seed: 5, Times: []int64{1000}}}
			hIn, hProc := newHost(), newHost()
			if tc.name == "floating call" {
				block(hIn)
				block(hProc)
			}
			want, err := inproc.Run(context.Background(), prog, hIn)
			if err != nil {
				t.Fatalf("in-process: %v", err)
			}
			got, err := pool.Run(context.Background(), prog, hProc)
			if err != nil {
				t.Fatalf("process: %v", err)
			}
			if tc.name == "clock limit" {
				// The readings past the recorded one are the wall clock's.
				if len(want.Clock.Times) != 1000 || len(got.Clock.Times) != 1000 {
					t.Errorf("clock readings kept: %d in process, %d in a worker; want 1000", len(want.Clock.Times), len(got.Clock.Times))
				}
				want.Clock.Times, got.Clock.Times = nil, nil
			}
			if want.Status == sandbox.Stopped && got.Stop != stopErr {
				t.Errorf("Stop = %v, want the host's own error", got.Stop)
			}
			opt := cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })
			if diff := cmp.Diff(want, got, opt); diff != "" {
				t.Errorf("outcome (-in-process +process):\n%s", diff)
			}
			// Concurrent calls reach the host in any order.
			sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
			if diff := cmp.Diff(hIn.Log(), hProc.Log(), sorted); diff != "" {
				t.Errorf("host log (-in-process +process):\n%s", diff)
			}
			if diff := cmp.Diff(hIn.Steps(), hProc.Steps()); diff != "" {
				t.Errorf("steps (-in-process +process):\n%s", diff)
			}
			if diff := cmp.Diff(hIn.SnippetInputs(), hProc.SnippetInputs()); diff != "" {
				t.Errorf("snippet inputs (-in-process +process):\n%s", diff)
			}
		})
	}
}

func TestProcessHostCallCancellationCrossesThePipe(t *testing.T) {
	pool := newPool(t, Options{Size: 1})
	cancelled := make(chan error, 1)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	}}
	waitIdle(t, pool, 1)
	before := pool.Stats().PIDs
	o := sandboxtest.Run(t, pool, h, "await notes.createNote({})", sandbox.Limits{Timeout: 200 * time.Millisecond})
	if o.Status != sandbox.Failed || o.Error != "timed out after 200ms" {
		t.Fatalf("outcome %v %q, want a timeout", o.Status, o.Error)
	}
	// A worker that ends its run is idle again when Run returns.
	if after := pool.Stats().PIDs; !slices.Contains(after, before[0]) {
		t.Errorf("idle workers %v before the run, %v after: the worker was killed rather than the call cancelled", before, after)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("host call ended with %v", err)
		}
	default:
		t.Errorf("the host call's context was not cancelled")
	}
}

func TestProcessCallerCancellation(t *testing.T) {
	pool := newPool(t, Options{Size: 1})
	tests := []struct {
		name  string
		cause error // the caller's cancellation's
		want  string
	}{
		{"cancel", nil, "canceled"},
		{"cause", errors.New("client went away"), "canceled: client went away"},
	}
	for _, tc := range tests {
		for _, code := range []string{"await notes.listNotes({});\nawait new Promise(() => {})", "await notes.listNotes({});\nwhile (true) {}"} {
			t.Run(tc.name+" "+code, func(t *testing.T) {
				// The caller cancels once the run is under way: once it
				// made its first call.
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				h := &sandboxtest.Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) {
					cancel(tc.cause)
					return json.RawMessage(`{}`), nil
				}}
				o, err := pool.Run(ctx, sandbox.Program{Code: code, Globals: sandboxtest.Globals}, h)
				if err != nil {
					t.Fatal(err)
				}
				if o.Status != sandbox.Failed || o.Error != tc.want {
					t.Fatalf("outcome %v %q, want failed: %s", o.Status, o.Error, tc.want)
				}
			})
		}
	}
	sandboxtest.WantCompleted(t, "after", sandboxtest.Run(t, pool, &sandboxtest.Host{}, "1 + 1", sandbox.Limits{}), "2")
}

func TestProcessPoolIsWarmAndRecycles(t *testing.T) {
	pool := newPool(t, Options{Size: 2, MaxRunsPerWorker: 3})
	waitIdle(t, pool, 2)
	seen := map[int]bool{}
	for i := range 12 {
		st := pool.Stats()
		for _, pid := range st.PIDs {
			seen[pid] = true
		}
		sandboxtest.WantCompleted(t, "run", sandboxtest.Run(t, pool, &sandboxtest.Host{}, fmt.Sprintf("%d * 2", i), sandbox.Limits{}), fmt.Sprint(i*2))
	}
	waitIdle(t, pool, 2)
	if st := pool.Stats(); st.Total > DefaultMaxWorkers {
		t.Errorf("%d workers alive", st.Total)
	}
	// 12 runs at most 3 per worker: at least 4 distinct workers served.
	if len(seen) < 4 {
		t.Errorf("%d distinct workers over 12 runs with MaxRunsPerWorker 3", len(seen))
	}
}

// waitIdle waits until the pool has n idle workers.
func waitIdle(t testing.TB, pool *Pool, n int) {
	t.Helper()
	fixture.Until(t, fmt.Sprintf("%d idle workers in the pool", n), func() bool { return pool.Stats().Idle >= n })
}

func TestProcessPoolMaxWorkersQueues(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 2})
	var wg sync.WaitGroup
	var mu sync.Mutex
	active, peak := 0, 0
	// Each run's call holds its worker until the test lets it go, one at
	// a time, once two are held: a third run could only start while two
	// are held if the pool started a third worker.
	arrived, release := make(chan struct{}), make(chan struct{})
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		active--
		mu.Unlock()
		return json.RawMessage(`1`), nil
	}}
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			o, err := pool.Run(context.Background(), sandbox.Program{Code: "await notes.listNotes({})", Globals: sandboxtest.Globals}, h)
			if err == nil && (o.Status != sandbox.Completed || string(o.Result) != "1") {
				err = fmt.Errorf("outcome %v %s %q", o.Status, o.Result, o.Error)
			}
			errs <- err
		})
	}
	<-arrived
	<-arrived
	for i := range 6 {
		release <- struct{}{}
		if i < 4 {
			<-arrived
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if peak > 2 {
		t.Errorf("%d runs at once with MaxWorkers 2", peak)
	}
}

func TestProcessPoolClose(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool(Options{Command: []string{exe}, Env: testWorkerEnv})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.CloseDuringRun(t, pool, "while (true) {}")
	if kids := childPIDs(t); len(kids) != 0 {
		t.Errorf("worker processes left after Close: %v", kids)
	}
}

func TestNewProcessPoolBadCommand(t *testing.T) {
	for _, cmd := range [][]string{nil, {"/nonexistent/codemode-worker"}, {"/bin/true"}} {
		p, err := NewPool(Options{Command: cmd})
		if err == nil {
			p.Close()
			t.Errorf("command %q: no error", cmd)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := NewPool(Options{Command: []string{exe}, Limiter: "rss"}); err == nil || !strings.Contains(err.Error(), `unknown limiter "rss"`) {
		if p != nil {
			p.Close()
		}
		t.Errorf("limiter rss: %v, want an error naming it", err)
	}
	// A worker started by hand, without its pipes, says why.
	cmd := exec.Command(exe)
	cmd.Env = []string{envTestWorker + "=1"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "fd 3 is not a pipe") {
		t.Errorf("worker without pipes: %v %q", err, out)
	}
}

// childPIDs lists the live child processes of this process.
func childPIDs(t testing.TB) []int {
	t.Helper()
	self := fmt.Sprint(os.Getpid())
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var ppid, state string
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "State:"); ok {
				state = strings.TrimSpace(v)
			}
		}
		if ppid == self && !strings.HasPrefix(state, "Z") {
			out = append(out, pid)
		}
	}
	return out
}

func TestProcessPoolStatsCountBusyAndReplaced(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1, MaxRunsPerWorker: 1})
	waitIdle(t, pool, 1)
	var during Stats
	h := &sandboxtest.Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) {
		during = pool.Stats()
		return json.RawMessage(`{}`), nil
	}}
	sandboxtest.WantCompleted(t, "run", sandboxtest.Run(t, pool, h, "await notes.listNotes({}); 1", sandbox.Limits{}), "1")
	if during.Busy != 1 || during.Idle != 0 {
		t.Errorf("during a run: %+v, want 1 busy, 0 idle", during)
	}
	// A worker recycled after MaxRunsPerWorker runs was not replaced
	// for a failure.
	waitIdle(t, pool, 1)
	if s := pool.Stats(); s.Replaced != 0 || s.Busy != 0 {
		t.Errorf("after a run that recycled its worker: %+v, want nothing replaced or busy", s)
	}
	// A worker killed while idle is replaced: found dead, or crashing
	// under the next run.
	proc, err := os.FindProcess(pool.Stats().PIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	sandboxtest.Run(t, pool, &sandboxtest.Host{}, "2", sandbox.Limits{})
	if s := pool.Stats(); s.Replaced != 1 {
		t.Errorf("after a worker was killed: %+v, want 1 replaced", s)
	}
}

// A worker's stderr is cut into lines however it is written: a line split
// across writes is one line, blank lines are skipped, a line without its
// end past maxLineSize is taken at that size, and the first fatal line and
// an out-of-memory report are noted.
func TestStderrTailLines(t *testing.T) {
	tail := &stderrTail{log: slog.New(slog.DiscardHandler)}
	long := strings.Repeat("x", maxLineSize+10)
	for _, chunk := range []string{"first li", "ne\n\nfatal error: runtime: out of memory\nsecond", "\n", long} {
		if n, err := tail.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	want := []string{"first line", "fatal error: runtime: out of memory", "second", long[:maxLineSize]}
	if diff := cmp.Diff(want, tail.last); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if tail.fatalLine() != want[1] || !tail.oom || tail.fault {
		t.Errorf("fatal line %q, oom %v, fault %v; want %q, true and false", tail.fatalLine(), tail.oom, tail.fault, want[1])
	}
}

// A fault in the runtime's own code is the fatal line, not the last line
// of the register dump that follows it, and is noted.
func TestStderrTailFault(t *testing.T) {
	tail := &stderrTail{log: slog.New(slog.DiscardHandler)}
	dump := "SIGSEGV: segmentation violation\nPC=0x439bbd m=3 sigcode=1 addr=0x0\ngoroutine 0 gp=0x1aed0e1f34a0 m=3 mp=0x1aed0e243008 [idle]:\nrip    0x439bbd\ngs     0x0\n"
	if _, err := tail.Write([]byte(dump)); err != nil {
		t.Fatal(err)
	}
	if tail.fatalLine() != "SIGSEGV: segmentation violation" || !tail.fault || tail.oom {
		t.Errorf("fatal line %q, fault %v, oom %v; want the SIGSEGV line, true and false", tail.fatalLine(), tail.fault, tail.oom)
	}
}

// TestStderrTailClipsALongLine: a line longer than maxLineSize, however
// it is written, is one line cut at that size; the rest of it is dropped.
// Before the fix each maxLineSize of it was a line of its own, so a
// megabyte written without a newline made a thousand log records.
func TestStderrTailClipsALongLine(t *testing.T) {
	tail := &stderrTail{log: slog.New(slog.DiscardHandler)}
	long := strings.Repeat("x", 1<<20)
	for chunk := range slices.Chunk([]byte(long+"\nafter\n"), 4096) {
		if _, err := tail.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{long[:maxLineSize], "after"}
	if diff := cmp.Diff(want, tail.last); diff != "" {
		t.Errorf("lines (-want +got):\n%.400s", diff)
	}
}

// TestLocalTimeIsUTC: a worker's Date shows local time as UTC whatever
// its TZ, so a replay after a restart under another zone sees what the
// first pass saw.
func TestLocalTimeIsUTC(t *testing.T) {
	for _, tz := range []string{"Asia/Kolkata", "America/New_York"} {
		e := newPool(t, Options{Size: 1, Env: []string{"TZ=" + tz}})
		o := sandboxtest.Run(t, e, &sandboxtest.Host{}, sandboxtest.LocalTime, sandbox.Limits{})
		sandboxtest.WantCompleted(t, tz, o, sandboxtest.LocalTimeUTC)
	}
}
