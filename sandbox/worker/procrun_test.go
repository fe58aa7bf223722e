package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
)

// slowThenQuick is a program whose first call (notes.createNote) is
// answered only after the host has served `quick` everything.add calls
// made while it is pending: unless a new leader takes over reading while
// the first leader serves the slow call, the run deadlocks. It does that
// twice, with a CPU-bound loop in between during which no call is served
// (so the handoff ticker has stopped and must start again).
func slowThenQuick(quick int) string {
	return fmt.Sprintf(`
		async function phase(n) {
			const slow = notes.createNote({ n });
			let s = 0;
			for (let i = 0; i < %d; i++) s += (await everything.add({ i })).i;
			await slow;
			return s;
		}
		const a = await phase(1);
		let x = 0;
		for (let i = 0; i < 3e5; i++) x = (x + i) %% 7;
		const b = await phase(2);
		return [a, b, x >= 0];
	`, quick)
}

// phasedHost serves slowThenQuick: createNote({n}) answers once n*quick
// add calls have been served in all (a held call may reach the host after
// some of the quick calls made after it).
type phasedHost struct {
	sandboxtest.Host
	quick int

	mu      sync.Mutex
	adds    int
	changed chan struct{} // closed and replaced at every add
}

func newPhasedHost(quick int) *phasedHost {
	h := &phasedHost{quick: quick, changed: make(chan struct{})}
	h.Host.OnCall = func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		var a struct{ N, I int }
		if err := json.Unmarshal(c.Args, &a); err != nil {
			return nil, err
		}
		switch c.Method {
		case "createNote":
			for {
				h.mu.Lock()
				done, changed := h.adds >= a.N*h.quick, h.changed
				h.mu.Unlock()
				if done {
					return json.RawMessage(`{}`), nil
				}
				select {
				case <-changed:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		case "add":
			h.mu.Lock()
			h.adds++
			close(h.changed)
			h.changed = make(chan struct{})
			h.mu.Unlock()
			return json.RawMessage(fmt.Sprintf(`{"i":%d}`, a.I)), nil
		}
		return nil, fmt.Errorf("unexpected method %s", c.Method)
	}
	return h
}

// TestProcessLeadersHandOffAndRestart checks the leaders' handoff through
// a quiet spell: a slow call pending while quick calls go on, twice, with
// a CPU-bound stretch in between.
func TestProcessLeadersHandOffAndRestart(t *testing.T) {
	pool := newPool(t, Options{Size: 1})
	const quick = 50
	o := sandboxtest.Run(t, pool, newPhasedHost(quick), slowThenQuick(quick), sandbox.Limits{Timeout: 20 * time.Second})
	sum := quick * (quick - 1) / 2
	sandboxtest.WantCompleted(t, "slowThenQuick", o, fmt.Sprintf("[%d,%d,true]", sum, sum))
}

// TestProcessLeadersStress runs many programs at once on a small pool,
// each mixing slow calls that need a handoff, concurrent quick calls and
// CPU-bound stretches, while some are cancelled at random moments and
// some workers are killed mid-run. Every run must end (completed, or
// failed with the cancellation or the crash), the pool must keep working,
// and no goroutine may be left behind (goleak in TestMain).
func TestProcessLeadersStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	pool := newPool(t, Options{Size: 2})
	const runs, quick = 24, 20
	concurrent := `
		const r = await Promise.all(Array.from({ length: 40 }, (_, i) => everything.echo({ i })));
		let x = 0;
		for (let i = 0; i < 2e5; i++) x = (x + i) % 7;
		return r.length + (x >= 0 ? 0 : 1);
	`
	var completed, failed atomic.Int32
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			code, host, want := slowThenQuick(quick), sandbox.Host(newPhasedHost(quick)), fmt.Sprintf("[%d,%d,true]", quick*(quick-1)/2, quick*(quick-1)/2)
			if i%2 == 1 {
				code, host, want = concurrent, &sandboxtest.Host{}, "40"
			}
			switch i % 6 {
			case 2: // cancelled at a random moment
				time.AfterFunc(time.Duration(rng.IntN(40_000))*time.Microsecond, cancel)
			case 3: // its worker killed at a random moment
				time.AfterFunc(time.Duration(rng.IntN(40_000))*time.Microsecond, func() {
					for _, pid := range childPIDs(t) {
						if p, err := os.FindProcess(pid); err == nil {
							_ = p.Kill()
						}
						return
					}
				})
			}
			o, err := pool.Run(ctx, sandbox.Program{Code: code, Globals: sandboxtest.Globals, Limits: sandbox.Limits{Timeout: 60 * time.Second}}, host)
			if err != nil {
				// A kill may also hit a worker the pool is starting.
				if !strings.Contains(err.Error(), "did not start") {
					t.Errorf("run %d: internal error: %v", i, err)
				}
				failed.Add(1)
				return
			}
			switch o.Status {
			case sandbox.Completed:
				if !sandboxtest.JSONEqual(t, o.Result, want) {
					t.Errorf("run %d: result %s, want %s", i, o.Result, want)
				}
				completed.Add(1)
			case sandbox.Failed:
				if i%6 != 2 && i%6 != 3 {
					// A kill aimed at another run's worker may land here.
					t.Logf("run %d failed: %s", i, o.Error)
				}
				failed.Add(1)
			default:
				t.Errorf("run %d: status %v (%s)", i, o.Status, o.Error)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d completed, %d failed", completed.Load(), failed.Load())
	if completed.Load() < runs/2 {
		t.Errorf("only %d of %d runs completed", completed.Load(), runs)
	}
	sandboxtest.WantCompleted(t, "after", sandboxtest.Run(t, pool, &sandboxtest.Host{}, "1 + 1", sandbox.Limits{}), "2")
}

// TestKillAfterTheRunSparesTheWorker: the deadline's and the grace's
// timers may fire as the run returns (time.Timer.Stop does not wait for a
// function already started); their kill must then leave alone the worker,
// which the pool may already have handed to the next run.
func TestKillAfterTheRunSparesTheWorker(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1})
	ctx := context.Background()
	w, err := pool.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &procRun{pool: pool, w: w, id: pool.nextRun.Add(1), prog: sandbox.Program{Code: "1 + 1"}, host: &sandboxtest.Host{}}
	o, keep, err := r.run(ctx)
	if err != nil || !keep {
		t.Fatalf("first run: %v, keep %v", err, keep)
	}
	sandboxtest.WantCompleted(t, "1 + 1", o, "2")
	r.kill(pass.TimeoutMessage(time.Second)) // a timer firing late

	next := &procRun{pool: pool, w: w, id: pool.nextRun.Add(1), prog: sandbox.Program{Code: "2 + 2"}, host: &sandboxtest.Host{}}
	o, keep, err = next.run(ctx)
	pool.release(w, keep)
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.WantCompleted(t, "2 + 2", o, "4")
}

// TestCanceledBeforeTheProgramIsSent: a Run whose context ends before its
// program reaches the worker (here, already at the call) is canceled in
// the worker like any other, not killed after the grace: the cancellation
// follows the program down the pipe.
func TestCanceledBeforeTheProgramIsSent(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1})
	waitIdle(t, pool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A long reason of an unavailable connector makes the program slow to
	// encode and send, so that a cancellation armed before the send would
	// win the race to the pipe, and costs the worker little once it is
	// there. The worker has KillGrace from the cancellation to report: a
	// long comment in the code, which it must normalise first, took it 0.6
	// s under the race detector at a load of 11, and past the grace in one
	// run in twelve.
	unavailable := sandbox.Global{Name: "big", Unavailable: strings.Repeat("x", 900<<10)}
	prog := sandbox.Program{Code: "while (true) {}", Globals: []sandbox.Global{unavailable}}
	o, err := pool.Run(ctx, prog, &sandboxtest.Host{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != sandbox.Failed || o.Error != "canceled" {
		t.Errorf("outcome %v %q, want failed, canceled", o.Status, o.Error)
	}
	if s := pool.Stats(); s.Replaced != 0 {
		t.Errorf("after a run canceled before it started: %+v, want no worker replaced", s)
	}
}

// TestAnOutcomeBeforeTheRepliesIsABrokenWorker: a worker reports its
// outcome only once every host request it made has been answered, so one
// that reports it while a call is still being served lies. Its run fails
// as a broken worker's, and the call it abandoned is cancelled rather than
// awaited: a slow downstream does not hold the run's end.
func TestAnOutcomeBeforeTheRepliesIsABrokenWorker(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1, Env: []string{envTestWorker + "=call:1:1 outcome"}})
	// Only a safety net for the code before the fix, which waited for the
	// call until the caller gave up.
	errGaveUp := errors.New("the test gave up")
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Minute, errGaveUp)
	defer cancel()
	cause := make(chan error, 1)
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		<-ctx.Done() // a downstream slower than the run
		cause <- context.Cause(ctx)
		return nil, ctx.Err()
	}}
	o, err := pool.Run(ctx, sandbox.Program{Code: "await notes.listNotes({})", Globals: sandboxtest.Globals}, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := <-cause; errors.Is(c, errGaveUp) {
		t.Errorf("the host call ran until the caller gave up")
	}
	if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "sandbox worker crashed") {
		t.Errorf("outcome %v %s %q, want a broken worker's failure", o.Status, o.Result, o.Error)
	}
	if s := pool.Stats(); s.Replaced == 0 {
		t.Errorf("stats %+v: the lying worker was kept", s)
	}
}

// TestAWorkerIsHeldToTheCallLimit: the parent holds a worker to the
// program's Limits.MaxCalls, which the worker is not trusted to enforce:
// one that asks for a seq past it, or for more requests than a program
// held to it could make, fails its run as a broken worker's before the
// host hears of the extra request.
func TestAWorkerIsHeldToTheCallLimit(t *testing.T) {
	for seqs, served := range map[string]int{"1,2,3": 2, "1,1,1,1,1,1": 5} {
		t.Run(seqs, func(t *testing.T) {
			var script []string
			for i, seq := range strings.Split(seqs, ",") {
				script = append(script, fmt.Sprintf("call:%d:%s reply", i+1, seq))
			}
			script = append(script, "outcome")
			pool := newPool(t, Options{Size: 1, MaxWorkers: 1, Env: []string{envTestWorker + "=" + strings.Join(script, " ")}})
			h := &sandboxtest.Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}
			prog := sandbox.Program{Code: "await notes.listNotes({})", Globals: sandboxtest.Globals, Limits: sandbox.Limits{MaxCalls: 2}}
			o, err := pool.Run(context.Background(), prog, h)
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "sandbox worker crashed") {
				t.Errorf("outcome %v %s %q, want a broken worker's failure", o.Status, o.Result, o.Error)
			}
			if n := len(h.Calls()); n != served {
				t.Errorf("the host served %d calls of a program limited to 2, want %d", n, served)
			}
		})
	}
}

// TestAWorkerIsHeldToItsMemoryInRequests: a worker keeps the requests it
// waits on in its own memory, so the parent refuses one that would bring
// those unanswered past the worker's memory limit (here 64 bytes, about
// three calls) instead of holding whatever a broken worker sends.
func TestAWorkerIsHeldToItsMemoryInRequests(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1, MemoryLimit: 64, Env: []string{envTestWorker + "=call:1:1 call:2:2 call:3:3 call:4:4 outcome"}})
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		<-ctx.Done() // a downstream slower than the run
		return nil, ctx.Err()
	}}
	o, err := pool.Run(context.Background(), sandbox.Program{Code: "await notes.listNotes({})", Globals: sandboxtest.Globals}, h)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "sandbox worker crashed") {
		t.Errorf("outcome %v %s %q, want a broken worker's failure", o.Status, o.Result, o.Error)
	}
	if n := len(h.Calls()); n != 3 {
		t.Errorf("the host served %d calls, want 3 (the fourth is past 64 bytes)", n)
	}
}

// TestARequestIdInUseIsABrokenWorker: a worker numbers its requests, so one
// that reuses the id of a request still being served is broken. (Else its
// quick second request's reply would clear the first from the parent's
// books, and an outcome then would wait for the first, slow, call.)
func TestARequestIdInUseIsABrokenWorker(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1, Env: []string{envTestWorker + "=call:1:1 call:1:2 reply outcome"}})
	errGaveUp := errors.New("the test gave up") // a safety net for the code before the fix
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Minute, errGaveUp)
	defer cancel()
	h := &sandboxtest.Host{OnCall: func(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
		if c.Seq == 2 {
			return json.RawMessage(`{}`), nil
		}
		<-ctx.Done() // a downstream slower than the run
		if errors.Is(context.Cause(ctx), errGaveUp) {
			t.Errorf("the host call ran until the caller gave up")
		}
		return nil, ctx.Err()
	}}
	o, err := pool.Run(ctx, sandbox.Program{Code: "await notes.listNotes({})", Globals: sandboxtest.Globals}, h)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "sandbox worker crashed") {
		t.Errorf("outcome %v %s %q, want a broken worker's failure", o.Status, o.Result, o.Error)
	}
}

// TestAWorkersInternalFailureIsClipped: the text of a worker's internal
// failure is the worker's (a hostile program may have written it); Run's
// error, which the server logs, keeps a bounded part of it. Before the
// fix it kept all of it (up to a frame's 64 MiB).
func TestAWorkersInternalFailureIsClipped(t *testing.T) {
	pool := newPool(t, Options{Size: 1, MaxWorkers: 1, Env: []string{envTestWorker + "=internal:4"}})
	_, err := pool.Run(context.Background(), sandbox.Program{Code: "1", Globals: sandboxtest.Globals}, &sandboxtest.Host{})
	if err == nil {
		t.Fatal("no error for an internal failure")
	}
	if !strings.Contains(err.Error(), "xxxx") || len(err.Error()) > 2*maxInternalText {
		t.Errorf("error of %d bytes (%.60q…), want the failure clipped to %d", len(err.Error()), err.Error(), maxInternalText)
	}
}
