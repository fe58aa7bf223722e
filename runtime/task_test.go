package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// gate makes kv.add block until the test opens it (or the call's context
// ends): entered receives one value per add that started.
type gate struct {
	entered chan string
	open    chan struct{}
}

func newGate(k *kv) *gate {
	g := &gate{entered: make(chan string, 16), open: make(chan struct{})}
	k.hook = func(ctx context.Context, tool string) error {
		if tool != "add" {
			return nil
		}
		g.entered <- tool
		select {
		case <-g.open:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return g
}

func (g *gate) wait(t *testing.T) {
	t.Helper()
	fixture.Wait(t, "the start of the call", g.entered)
}

func terminal(e *codemode.Execution) bool { return e.Status.Terminal() }

func (e *env) await(id string, until func(*codemode.Execution) bool) *codemode.Execution {
	e.t.Helper()
	ctx, cancel := fixture.WithDeadline(e.t, e.ctx)
	defer cancel()
	x, err := e.rt.Await(ctx, id, 0, until)
	if err != nil {
		e.t.Fatalf("Await(%s): %v (status %s)", id, err, e.status(id))
	}
	return x
}

func (e *env) start(code string) codemode.Outcome {
	e.t.Helper()
	o, err := e.rt.Start(e.ctx, code, codemode.Task{TTL: time.Hour})
	if err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	mustStatus(e.t, o, codemode.StatusRunning)
	return o
}

func TestStartReturnsAtOnceAndTheRunGoesOnInTheBackground(t *testing.T) {
	k := newKV("kv")
	g := newGate(k)
	e := newEnv(t, setup{kv: k})
	const code = `await kv.add({ key: "a", value: "1" }); return { done: true }`
	o := e.start(code)
	g.wait(t) // the call is made after Start returned
	if st := e.status(o.ExecutionID); st != codemode.StatusRunning {
		t.Fatalf("status while the call waits = %s, want running", st)
	}
	x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Task == nil || x.Task.TTL != time.Hour {
		t.Errorf("Task = %+v, want the task as started", x.Task)
	}
	close(g.open)
	e.await(o.ExecutionID, terminal)
	got, err := e.rt.Outcome(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	// The outcome is the one a plain call of the same program gives.
	plain := e.run(code, nil)
	got.ExecutionID, plain.ExecutionID = "", ""
	if diff := cmp.Diff(plain, got); diff != "" {
		t.Errorf("task outcome differs from the plain call's (-plain +task):\n%s", diff)
	}
}

func TestTaskPassesHaveTheTaskTimeout(t *testing.T) {
	const code = `await new Promise(r => setTimeout(r, 300)); return 1`
	e := newEnv(t, setup{limits: sandbox.Limits{Timeout: 100 * time.Millisecond}, taskTimeout: 20 * time.Second})
	mustStatus(t, e.run(code, nil), codemode.StatusError)
	o := e.start(code)
	if x := e.await(o.ExecutionID, terminal); x.Status != codemode.StatusCompleted {
		t.Errorf("task run = %s (%s), want completed within its own timeout", x.Status, x.Error)
	}

	// (A program far longer than the task's timeout, and a timeout long
	// enough that the pass is under way when it ends, however loaded the
	// machine.)
	e = newEnv(t, setup{limits: sandbox.Limits{Timeout: 20 * time.Second}, taskTimeout: time.Second})
	o = e.start(`await new Promise(r => setTimeout(r, 60000)); return 1`)
	x := e.await(o.ExecutionID, terminal)
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "timed out after 1s") {
		t.Errorf("task run = %s (%s), want error: timed out after 1s", x.Status, x.Error)
	}
}

func TestCancelStopsARunningTaskAndNoCallStartsAfterwards(t *testing.T) {
	k := newKV("kv")
	g := newGate(k)
	e := newEnv(t, setup{kv: k})
	o := e.start(`await kv.add({ key: "a" }); await kv.add({ key: "b" }); await kv.get({ key: "a" }); return 1`)
	g.wait(t)
	out, err := e.rt.Cancel(e.ctx, o.ExecutionID, "cancelled by the client")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	if out.Error != "cancelled by the client" {
		t.Errorf("error = %q, want the reason", out.Error)
	}
	// Cancel returned once the pass had stopped: nothing more is called.
	k.mu.Lock()
	calls := map[string]int{"add": k.calls["add"], "get": k.calls["get"]}
	k.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"add": 1, "get": 0}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1 kv.add error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if st := e.status(o.ExecutionID); st != codemode.StatusCancelled {
		t.Errorf("status = %s, want cancelled", st)
	}
	if _, err := e.rt.Cancel(e.ctx, o.ExecutionID, "again"); !errors.Is(err, codemode.ErrWrongState) {
		t.Errorf("second Cancel: %v, want ErrWrongState", err)
	}
}

func TestCancelAPausedTaskRejectsWhatWasPending(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.start(`await kv.put({ key: "a", value: "1" }); return 1`)
	e.await(o.ExecutionID, func(x *codemode.Execution) bool { return x.Status != codemode.StatusRunning })
	out, err := e.rt.Cancel(e.ctx, o.ExecutionID, "stop")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	if diff := cmp.Diff([]string{"1 kv.put rejected"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if _, err := e.rt.Approve(e.ctx, o.ExecutionID, nil); !errors.Is(err, codemode.ErrWrongState) {
		t.Errorf("Approve after Cancel: %v, want ErrWrongState", err)
	}
	if k := e.kv; k.calls["put"] != 0 {
		t.Errorf("put called %d times", k.calls["put"])
	}
}

func TestCancelRefusals(t *testing.T) {
	e := newEnv(t, setup{})
	plain := e.run(`await kv.put({ key: "a", value: "1" })`, nil)
	mustStatus(t, plain, codemode.StatusPaused)
	if _, err := e.rt.Cancel(e.ctx, plain.ExecutionID, "x"); !errors.Is(err, codemode.ErrWrongState) || !strings.Contains(err.Error(), "not started as a task") {
		t.Errorf("Cancel of a run that is not a task: %v", err)
	}
	done := e.start(`return 1`)
	e.await(done.ExecutionID, terminal)
	if _, err := e.rt.Cancel(e.ctx, done.ExecutionID, "x"); !errors.Is(err, codemode.ErrWrongState) || !strings.Contains(err.Error(), "has completed; only a running, paused or waiting execution can be cancelled") {
		t.Errorf("Cancel of a completed task: %v", err)
	}
	if _, err := e.rt.Cancel(e.ctx, "exec_nope", "x"); !errors.Is(err, codemode.ErrUnknownExecution) {
		t.Errorf("Cancel of an unknown run: %v", err)
	}
}

func TestCancelThroughAnotherProcessStopsThePass(t *testing.T) {
	k := newKV("kv")
	g := newGate(k)
	a := newEnv(t, setup{kv: k})
	b := newEnvAt(t, a.dbPath, setup{})
	o := a.start(`await kv.add({ key: "a" }); await kv.add({ key: "b" }); return 1`)
	g.wait(t)
	out, err := b.rt.Cancel(b.ctx, o.ExecutionID, "cancelled through b")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	// a's pass sees the status within a second and stops: its call is
	// cancelled, and the program makes no second call.
	a.await(o.ExecutionID, func(*codemode.Execution) bool {
		_, log, err := a.rt.Execution(a.ctx, o.ExecutionID)
		return err == nil && len(log) == 1 && log[0].State == codemode.EntryError
	})
	if st := a.status(o.ExecutionID); st != codemode.StatusCancelled {
		t.Errorf("status = %s, want cancelled", st)
	}
	a.shutdown() // waits for the pass
	if n := k.calls["add"]; n != 1 {
		t.Errorf("add called %d times, want 1", n)
	}
}

func TestResumeDecidesAtOnceAndRunsInTheBackground(t *testing.T) {
	k := newKV("kv")
	g := newGate(k)
	e := newEnv(t, setup{kv: k})
	o := e.start(`await kv.put({ key: "a", value: "1" }); await kv.add({ key: "b" }); return "done"`)
	x := e.await(o.ExecutionID, func(x *codemode.Execution) bool { return x.Status == codemode.StatusPaused })
	pending, err := e.rt.Pending(e.ctx, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Resume(e.ctx, x.ID, codemode.Review{Digest: "not what was shown"}); !errors.Is(err, codemode.ErrNotAsShown) {
		t.Fatalf("Resume with another digest: %v, want ErrNotAsShown", err)
	}
	out, err := e.rt.Resume(e.ctx, x.ID, codemode.Review{Digest: codemode.PendingDigest(pending)})
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusRunning)
	g.wait(t) // the resumed pass goes on after Resume returned
	close(g.open)
	if x := e.await(o.ExecutionID, terminal); x.Status != codemode.StatusCompleted {
		t.Fatalf("status = %s (%s), want completed", x.Status, x.Error)
	}
	if diff := cmp.Diff([]string{"1 kv.put applied", "2 kv.add applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestCloseEndsTaskPassesWithTheReason(t *testing.T) {
	k := newKV("kv")
	g := newGate(k)
	e := newEnv(t, setup{kv: k})
	o := e.start(`await kv.add({ key: "a" }); return 1`)
	g.wait(t)
	e.restart(setup{})
	x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "the server shut down while the run was in progress") {
		t.Errorf("after a shutdown: %s (%s), want error naming the shutdown", x.Status, x.Error)
	}
}

func TestCancelARunningTaskWhoseProcessIsGone(t *testing.T) {
	e := newEnv(t, setup{lease: time.Hour}) // no heartbeat recovers the run meanwhile
	o := deadOwner(t, time.Now())
	if err := e.store.RegisterOwner(e.ctx, o); err != nil {
		t.Fatal(err)
	}
	x := &codemode.Execution{ID: "exec_orphan", Code: `async () => {}`, Status: codemode.StatusRunning, Owner: o.ID, Task: &codemode.Task{TTL: time.Hour}}
	if err := e.store.CreateExecution(e.ctx, x); err != nil {
		t.Fatal(err)
	}
	if err := e.store.WriteEntries(e.ctx, []codemode.Entry{addEntry(x.ID, 1, "a", codemode.EntryApplied, `{}`), addEntry(x.ID, 2, "b", codemode.EntryExecuting, "")}, nil); err != nil {
		t.Fatal(err)
	}
	out, err := e.rt.Cancel(e.ctx, x.ID, "cancelled by the client")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusCancelled)
	if !strings.Contains(out.Error, "cancelled by the client; its process was gone") {
		t.Errorf("error %q", out.Error)
	}
	// Nobody was left to settle the call in flight: it is unknown, as
	// after a recovery, not executing forever.
	if diff := cmp.Diff([]string{"1 kv.add applied", "2 kv.add unknown"}, e.log(x.ID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
