package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/policy"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// taskEntry returns the log entry of run id at seq, failing if absent.
func (e *env) entry(id string, seq int) codemode.Entry {
	e.t.Helper()
	_, log, err := e.rt.Execution(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, en := range log {
		if en.Seq == seq {
			return en
		}
	}
	e.t.Fatalf("run %s has no call %d", id, seq)
	return codemode.Entry{}
}

func waiting(x *codemode.Execution) bool { return x.Status == codemode.StatusWaiting }

// A call of a tool its server runs as a task: the task's id is logged
// before the run waits, the run waits without a pass, and once the task
// has ended the run resumes by replay and the program gets its result;
// the tool was called once.
func TestADownstreamTaskIsAwaitedWithoutAPass(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	const code = `const n = await fx.task_counter({ name: "a", ms: 400 }); return { n }`
	o := e.start(code)
	x := e.await(o.ExecutionID, waiting)
	if x.Owner == "" {
		t.Error("a waiting run has no owner to watch it")
	}
	en := e.entry(o.ExecutionID, 1)
	if en.State != codemode.EntryWaiting || en.Task == "" {
		t.Fatalf("the call while the run waits = %+v, want waiting with its task id", en)
	}
	x = e.await(o.ExecutionID, terminal)
	if x.Status != codemode.StatusCompleted || string(x.Result) != `{"n":1}` {
		t.Fatalf("run = %s %s (%s), want completed with n 1", x.Status, x.Result, x.Error)
	}
	done := e.entry(o.ExecutionID, 1)
	if done.State != codemode.EntryApplied || done.Task != en.Task || string(done.Result) != "1" {
		t.Errorf("the call once its task ended = %+v, want applied, result 1, task %s", done, en.Task)
	}
	if n := e.effectCount("a"); n != 1 {
		t.Errorf("the tool was called %d times, want once", n)
	}

	// A plain call waits for the run to end, and gives its outcome.
	out := e.run(`return await fx.task_counter({ name: "b", ms: 1 })`, nil)
	mustStatus(t, out, codemode.StatusCompleted)
	if string(out.Result) != "1" {
		t.Errorf("plain call result = %s, want 1", out.Result)
	}
}

// pauseWithATask sets up a pass that stops for a person and for a
// downstream task at once, in an order fixed by construction: kv.add
// (call 1) needs approval; kv.get (call 2) is held until the approver is
// asked about call 1, and only then does the program call
// fx.task_counter (call 3); the approver gives no answer once call 3 is
// logged with its task. (A task that starts before the other call is
// decided stops the pass first: the run then waits, and pauses when the
// task has ended and the replay reaches the call.)
func pauseWithATask(t *testing.T, ms int) (*env, string, codemode.Approver) {
	k := newKV("kv")
	asked := make(chan struct{})
	k.hook = func(ctx context.Context, tool string) error {
		if tool != "get" {
			return nil
		}
		select {
		case <-asked:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	e := newEnv(t, setup{kv: k, mcp: true, fxTasks: true, kvApprove: []string{"add"}})
	code := fmt.Sprintf(`const [, n] = await Promise.all([
		kv.add({ key: "k", value: "v" }),
		kv.get({ key: "k" }).then(() => fx.task_counter({ name: "c", ms: %d })),
	]);
	return n`, ms)
	var once sync.Once
	ap := approverFunc(func(ctx context.Context, a codemode.PendingAction) (codemode.Decision, error) {
		once.Do(func() { close(asked) })
		for ctx.Err() == nil {
			_, log, err := e.rt.Execution(ctx, a.ExecutionID)
			if err != nil {
				return codemode.NoAnswer, err
			}
			for _, en := range log {
				if en.Seq == 3 && en.Task != "" {
					return codemode.NoAnswer, nil
				}
			}
			time.Sleep(5 * time.Millisecond) // polls the store; the deadline is ctx's
		}
		return codemode.NoAnswer, ctx.Err()
	})
	return e, code, ap
}

// A run that pauses for an approval while a call's task works: the
// approval's replay reads the logged task (it does not call the tool
// again), waits for it if it still works, and the run completes with
// the tool called once.
func TestAnApprovalReplayReadsTheLoggedTask(t *testing.T) {
	e, code, ap := pauseWithATask(t, 300)
	o := e.run(code, ap)
	mustStatus(t, o, codemode.StatusPaused)
	en := e.entry(o.ExecutionID, 3)
	if en.Task == "" || (en.State != codemode.EntryWaiting && en.State != codemode.EntryApplied) {
		t.Fatalf("the task call while the run is paused = %+v, want its task logged", en)
	}
	out := e.approve(o.ExecutionID, nil)
	mustStatus(t, out, codemode.StatusCompleted)
	if string(out.Result) != "1" {
		t.Errorf("result = %s, want 1", out.Result)
	}
	if n := e.effectCount("c"); n != 1 {
		t.Errorf("the tool was called %d times, want once", n)
	}
	if got := e.entry(o.ExecutionID, 3); got.Task != en.Task || got.State != codemode.EntryApplied {
		t.Errorf("the task call = %+v, want applied with task %s", got, en.Task)
	}
}

// A task that starts while a person is asked about another call of the
// pass: the run pauses at once (a pause wins over a wait) rather than
// waiting for the task and pausing when it ends. Ending the paused run,
// by a rejection or a rollback, settles the waiting call: it ends error
// and its task is cancelled at its server.
func TestAPauseWinsOverATaskStartedWhileAPersonIsAsked(t *testing.T) {
	for _, end := range []struct {
		name string
		end  func(e *env, id string) (codemode.Outcome, error)
		want codemode.ExecStatus
	}{
		{"reject", func(e *env, id string) (codemode.Outcome, error) { return e.rt.Reject(e.ctx, id, 1) }, codemode.StatusRejected},
		{"rollback", func(e *env, id string) (codemode.Outcome, error) { return e.rt.Rollback(e.ctx, id) }, codemode.StatusRolledBack},
	} {
		t.Run(end.name, func(t *testing.T) {
			e, code, ap := pauseWithATask(t, 600000)
			ctx, cancel := fixture.WithDeadline(t, e.ctx)
			defer cancel()
			o, err := e.rt.Execute(ctx, code, ap)
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, o, codemode.StatusPaused)
			if en := e.entry(o.ExecutionID, 3); en.State != codemode.EntryWaiting || en.Task == "" {
				t.Fatalf("the task call = %+v, want waiting with its task", en)
			}
			out, err := end.end(e, o.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, out, end.want)
			en := e.entry(o.ExecutionID, 3)
			if en.State != codemode.EntryError || !strings.Contains(en.Error, "the task was cancelled") {
				t.Errorf("the waiting call = %+v, want error: its task cancelled", en)
			}
			if st, err := e.fx.PollTask(e.ctx, en.Task); err != nil || st.Status != "cancelled" {
				t.Errorf("the downstream task = %+v, %v; want cancelled", st, err)
			}
		})
	}
}

// A task that fails throws into the program, as a failed call does, and
// replays the same way.
func TestAFailedDownstreamTaskThrows(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	out := e.run(`try { await fx.task_counter({ name: "f", ms: 1, fail: true }) } catch (err) { return String(err.message) }`, nil)
	mustStatus(t, out, codemode.StatusCompleted)
	if !strings.Contains(string(out.Result), "failed as asked") {
		t.Errorf("result = %s, want the task's failure", out.Result)
	}
	if en := e.entry(out.ExecutionID, 1); en.State != codemode.EntryError || en.Task == "" {
		t.Errorf("the failed call = %+v, want error with its task id", en)
	}
}

// Cancelling a task run that waits: the run ends cancelled, the call ends
// error, and its task is cancelled at its server.
func TestCancelAWaitingRunCancelsItsTask(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	o := e.start(`await fx.task_counter({ name: "x", ms: 600000 }); return 1`)
	e.await(o.ExecutionID, waiting)
	out, err := e.rt.Cancel(e.ctx, o.ExecutionID, "cancelled by the client")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	en := e.entry(o.ExecutionID, 1)
	if en.State != codemode.EntryError || !strings.Contains(en.Error, "the task was cancelled") {
		t.Errorf("the waiting call = %+v, want error: its task cancelled", en)
	}
	st, err := e.fx.PollTask(e.ctx, en.Task)
	if err != nil || st.Status != "cancelled" {
		t.Errorf("the downstream task = %+v, %v; want cancelled", st, err)
	}
}

// A server started again forgets its tasks: the call fails, saying it
// may or may not have taken effect, and the program goes on.
func TestATaskItsServerForgotFailsTheCall(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	o := e.start(`try { await fx.task_counter({ name: "lost", ms: 600000 }) } catch (err) { return String(err.message) }`)
	e.await(o.ExecutionID, waiting)
	if _, err := e.fx.Call(e.ctx, "crash", nil); err == nil {
		t.Fatal("the crash tool returned")
	}
	x := e.await(o.ExecutionID, terminal)
	if x.Status != codemode.StatusCompleted || !strings.Contains(string(x.Result), "may or may not have taken effect") {
		t.Errorf("run = %s %s (%s), want completed with the call's failure", x.Status, x.Result, x.Error)
	}
}

// A run left waiting by a process that died is taken over by a serving
// process: it resumes it, its replay reads the task (which the dead
// process's server took with it) and the program goes on.
func TestAServingProcessTakesOverADeadOnesWaitingRun(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{mcp: true, fxTasks: true, clock: clk, lease: 300 * time.Millisecond})
	o := deadOwner(t, clk.Now())
	en := codemode.Entry{ExecutionID: "exec_left", Seq: 1, Kind: codemode.KindCall, Connector: "fx", Method: "task_counter",
		Args: []byte(`{"name":"left","ms":600000}`), State: codemode.EntryWaiting, Task: "a-task-of-a-server-that-is-gone"}
	if err := e.store.RegisterOwner(e.ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateExecution(e.ctx, &codemode.Execution{ID: "exec_left", Status: codemode.StatusWaiting, Owner: o.ID,
		Code: `try { await fx.task_counter({ name: "left", ms: 600000 }) } catch (err) { return "lost" }`}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.InsertEntry(e.ctx, en); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := fixture.WithDeadline(t, e.ctx)
	defer cancel()
	if err := e.rt.Join(ctx); err != nil {
		t.Fatal(err)
	}
	x := e.await("exec_left", terminal)
	if x.Status != codemode.StatusCompleted || string(x.Result) != `"lost"` {
		t.Errorf("run = %s %s (%s), want completed: the task was lost", x.Status, x.Result, x.Error)
	}
	if n := e.effectCount("left"); n != 0 {
		t.Errorf("the tool was called %d times by the takeover, want never", n)
	}
}

// The acceptance of downstream tasks: twenty programs call a tool that
// runs as a 5-second task at once, on a pool of two worker processes.
// Were a worker held while its program waits, they would take 50 s; they
// take about 5. Each log holds its call's task id; the programs that then
// need an approval are approved, and the replay calls the tool no more.
func TestTwentyProgramsWaitForDownstreamTasksOnTwoWorkers(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true, workers: 2})
	const n = 20
	type result struct {
		o   codemode.Outcome
		err error
	}
	results := make(chan result, n)
	began := time.Now()
	for i := range n {
		code := fmt.Sprintf(`const n = await fx.task_counter({ name: "run%d", ms: 5000 });`, i)
		if i%2 == 0 {
			code += fmt.Sprintf(` await kv.put({ key: "run%d", value: String(n) });`, i)
		}
		code += ` return n`
		go func() {
			o, err := e.rt.Execute(e.ctx, code, nil)
			results <- result{o, err}
		}()
	}
	var paused []string
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		switch r.o.Status {
		case codemode.StatusPaused:
			paused = append(paused, r.o.ExecutionID)
		case codemode.StatusCompleted:
		default:
			t.Fatalf("outcome = %+v, want completed or paused for an approval", r.o)
		}
		if en := e.entry(r.o.ExecutionID, 1); en.Task == "" || en.State != codemode.EntryApplied {
			t.Errorf("run %s: its task call = %+v, want applied with its task id", r.o.ExecutionID, en)
		}
	}
	t.Logf("%d programs waiting on 5-second downstream tasks, 2 workers: all settled in %v", n, time.Since(began).Round(time.Millisecond))
	if len(paused) != n/2 {
		t.Fatalf("%d runs paused, want %d", len(paused), n/2)
	}
	for _, id := range paused {
		mustStatus(t, e.approve(id, nil), codemode.StatusCompleted)
	}
	for i := range n {
		if c := e.effectCount(fmt.Sprintf("run%d", i)); c != 1 {
			t.Errorf("run%d: the tool was called %d times, want once", i, c)
		}
	}
}

// A plain call waits for a downstream task no longer than its timeout:
// past it, its outcome is waiting, and the run goes on to its end.
func TestAPlainCallWaitsAtMostItsTimeout(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true, limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	out := e.run(`return await fx.task_counter({ name: "later", ms: 1500 })`, nil)
	mustStatus(t, out, codemode.StatusWaiting)
	x := e.await(out.ExecutionID, terminal)
	if x.Status != codemode.StatusCompleted || string(x.Result) != "1" {
		t.Errorf("run = %s %s (%s), want completed with 1", x.Status, x.Result, x.Error)
	}
}

// A rollback's revert cannot wait for a task: a revert function that calls
// a task tool calls it plainly.
func TestARevertCallsATaskToolPlainly(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true, fxRevert: map[string]string{
		"task_counter": `(args) => fx.task_counter({ name: "undo-" + args.name, ms: 1 })`,
	}})
	out := e.run(`return await fx.task_counter({ name: "r", ms: 1 })`, nil)
	mustStatus(t, out, codemode.StatusCompleted)
	rb, err := e.rt.Rollback(e.ctx, out.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, rb, codemode.StatusRolledBack)
	if len(rb.Reverted) != 1 || e.effectCount("undo-r") != 1 {
		t.Errorf("rollback = %+v, undo count %d; want call 1 reverted by one plain call", rb, e.effectCount("undo-r"))
	}
}

// A waiting run cancelled through another process: that process's server
// does not know the task (another stdio server), so the process that
// started it, which watches the run, cancels it at its server.
func TestAWaitingRunCancelledElsewhereHasItsTaskCancelledByItsOwner(t *testing.T) {
	a := newEnv(t, setup{mcp: true, fxTasks: true})
	b := newEnvAt(t, a.dbPath, setup{mcp: true, fxTasks: true})
	o := a.start(`await fx.task_counter({ name: "elsewhere", ms: 600000 }); return 1`)
	a.await(o.ExecutionID, waiting)
	out, err := b.rt.Cancel(b.ctx, o.ExecutionID, "cancelled through b")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	id := a.entry(o.ExecutionID, 1).Task
	// tasks/result waits for the task to end: a's waiter ends it.
	ctx, cancel := fixture.WithDeadline(t, a.ctx)
	defer cancel()
	res, err := a.fx.TaskResult(ctx, id)
	if err != nil || !res.IsError || !strings.Contains(res.Message, "cancelled") {
		t.Errorf("the task at a's server = %+v, %v; want cancelled", res, err)
	}
}

// An approver who decides another's run, whose approved call its server
// runs as a task, waits for the run as its starter would (a plain call
// waits for the tasks, up to its timeout), and is not recorded as having
// asked to see a run the policy hides: before, the wait checked that the
// approver may see the run, refused (audited as a hidden run's view), and
// the approval answered waiting at once.
func TestAnApproverWaitsForTheTasksOfAnothersRun(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true, fxApprove: []string{"task_counter"}, policy: &policy.Policy{Approvers: policy.Approvers{Groups: []string{"ops"}}}})
	o, err := e.rt.Execute(as(alice), `return await fx.task_counter({ name: "a", ms: 200 })`, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	o, err = e.rt.Approve(as(bob), o.ExecutionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	recs, err := e.rt.Audit(e.ctx, codemode.AuditQuery{ExecutionID: o.ExecutionID})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Action == codemode.AuditView {
			t.Errorf("audit: %+v; the approver did not ask to see the run", rec)
		}
	}
}

// A waiting run's waiter reads, at every poll, the calls that wait for a
// task, not its whole log: a run that logged 8 steps of 512 kB results
// (4 MB) before its call waits makes one poll allocate far less.
func TestAPollOfTheTasksReadsNotTheWholeLog(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	const steps, size = 8, 512 << 10
	o := e.start(fmt.Sprintf(`for (let i = 0; i < %d; i++) await codemode.step("s" + i, async () => "r".repeat(%d));
		return await fx.task_counter({ name: "long", ms: 60000 })`, steps, size-16))
	e.await(o.ExecutionID, waiting)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	next := runtime.TaskPoll(e.ctx, e.rt, o.ExecutionID)
	goruntime.ReadMemStats(&m1)
	if next == 0 {
		t.Fatal("the poll found no task still running")
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > steps*size/10 {
		t.Errorf("a poll of a waiting run with %d steps of %d bytes logged allocated %d bytes, want at most %d", steps, size, n, steps*size/10)
	}
}

// A waiting run's waiter reads the run brief at every poll, not its code
// and console output: a run of 512 kB of code that printed 8 lines of
// 128 kB before its call waits makes one poll allocate far less than the
// 1.5 MB it holds.
func TestAPollOfAWaitingRunReadsItBrief(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxTasks: true})
	const lines, size = 8, 128 << 10
	o := e.start(fmt.Sprintf(`// %s
		for (let i = 0; i < %d; i++) console.log("l".repeat(%d));
		return await fx.task_counter({ name: "long", ms: 60000 })`, strings.Repeat("c", 512<<10), lines, size))
	e.await(o.ExecutionID, waiting)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	next, more := runtime.WaitPoll(e.ctx, e.rt, o.ExecutionID)
	goruntime.ReadMemStats(&m1)
	if !more || next == 0 {
		t.Fatalf("the poll returned %v, %v; want the waiter to go on, its task still running", next, more)
	}
	if n, bound := m1.TotalAlloc-m0.TotalAlloc, uint64(lines*size/10); n > bound {
		t.Errorf("a poll of a waiting run of 512 kB of code and %d lines of %d bytes of output allocated %d bytes, want at most %d", lines, size, n, bound)
	}
}
