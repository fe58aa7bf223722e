package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Rollback reverts newest first, attempts every revert when one fails, and
// reports the failures.
func TestRollbackNewestFirstDespiteAFailure(t *testing.T) {
	k := newKV("kv")
	k.revertFail["b"] = true
	e := newEnv(t, setup{kv: k, mcp: true})
	o := e.run(`async () => {
		await kv.add({ key: "a", value: "1" });
		await fx.get_sum({ a: 1, b: 1 });
		await kv.add({ key: "b", value: "2" });
		await kv.add({ key: "c", value: "3" });
		return "ok";
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)

	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]int{4, 1}, r.Reverted); diff != "" {
		t.Errorf("reverted (-want +got):\n%s", diff)
	}
	want := []codemode.RevertFailure{{Seq: 3, Connector: "kv", Method: "add", Error: "kv: cannot revert b"}}
	if diff := cmp.Diff(want, r.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "a"}, k.revertedKeys()); diff != "" {
		t.Errorf("revert order (-want +got):\n%s", diff)
	}
	wantLog := []string{"1 kv.add reverted", "2 fx.get_sum applied", "3 kv.add applied", "4 kv.add reverted"}
	if diff := cmp.Diff(wantLog, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if _, ok := k.get("a"); ok {
		t.Error("a is still set after its revert")
	}
	// The run's message says what stays, wherever its status is shown.
	wantNote := "rolled back partly: 2 calls reverted; call 3 (kv.add) stays as it was: its revert failed: kv: cannot revert b"
	x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil || r.Error != wantNote || x.Error != wantNote {
		t.Errorf("outcome error %q, run error %q (%v); want %q", r.Error, x.Error, err, wantNote)
	}
}

// A rollback that could revert nothing says so in the run's message.
func TestRollbackThatRevertedNothingSaysSo(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => fx.counter({ name: "kept" })`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	want := "rolled back, but nothing was reverted; call 1 (fx.counter): nothing can revert it: it stays applied"
	if r.Error != want {
		t.Errorf("outcome error %q, want %q", r.Error, want)
	}
}

// A configured JavaScript revert for an MCP tool runs in the sandbox, its
// calls are not gated (the human asked for the rollback) and are logged
// after the run's entries.
func TestRollbackWithConfiguredJSRevert(t *testing.T) {
	e := newEnv(t, setup{
		mcp:       true,
		fxApprove: []string{"counter"},
		fxRevert:  map[string]string{"counter": `(args, result) => fx.counter({ name: "undo-" + args.name + "-" + result })`},
	})
	o := e.run(`async () => fx.counter({ name: "x" })`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)

	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]int{1}, r.Reverted); diff != "" || len(r.Failures) != 0 {
		t.Errorf("reverted %v (-want +got %s), failures %v", r.Reverted, diff, r.Failures)
	}
	if got := e.effectCount("undo-x-1"); got != 1 {
		t.Errorf("undo ran %d times, want 1", got)
	}
	if diff := cmp.Diff([]string{"1 fx.counter reverted", "2 fx.counter applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestRollbackJSRevertFailureIsReported(t *testing.T) {
	e := newEnv(t, setup{
		kvRevert: map[string]string{"noop": `(args, result) => { throw new Error("cannot undo " + JSON.stringify(args)) }`},
	})
	o := e.run(`async () => { await kv.noop({ n: 1 }); await kv.add({ key: "a" }); }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2}, r.Reverted); diff != "" {
		t.Errorf("reverted (-want +got):\n%s", diff)
	}
	if len(r.Failures) != 1 || r.Failures[0].Seq != 1 || !strings.Contains(r.Failures[0].Error, `cannot undo {"n":1}`) {
		t.Errorf("failures = %+v, want seq 1 with the thrown message", r.Failures)
	}
}

// Rolling back a paused run rejects its pending action first; calls nothing
// can revert stay applied and are not failures.
func TestRollbackPausedRun(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
		await kv.add({ key: "a", value: "1" });
		await fx.echo({ message: "not revertible" });
		await kv.put({ key: "b", value: "2" });
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]int{1}, r.Reverted); diff != "" || len(r.Failures) != 0 {
		t.Errorf("reverted %v (%s), failures %v", r.Reverted, diff, r.Failures)
	}
	wantLog := []string{"1 kv.add reverted", "2 fx.echo applied", "3 kv.put rejected"}
	if diff := cmp.Diff(wantLog, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if e.kv.count("put") != 0 {
		t.Error("the pending put ran")
	}
}

// A revert function's calls that may have a side effect are committed
// before they are sent, and the call it undoes is marked reverted in the
// same transaction as its last result: a crash never leaves a call whose
// revert completed still applied (which a second rollback would revert
// again), only, at worst, the revert call in flight unknown.
func TestRevertPassMarksTheCallRevertedWithItsLastWrite(t *testing.T) {
	cs := &countingStore{}
	e := newEnv(t, setup{
		wrap:     cs.wrap,
		kvRevert: map[string]string{"noop": `async (args) => { await kv.add({ key: "u1" }); await kv.add({ key: "u2" }); }`},
	})
	o := e.run(`async () => { await kv.noop({ n: 1 }) }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	var writes [][]string
	cs.beforeWrite = func(inserts []codemode.Entry, updates []codemode.EntryUpdate) (bool, error) {
		var w []string
		for _, en := range inserts {
			w = append(w, fmt.Sprintf("new %d %s.%s %s", en.Seq, en.Connector, en.Method, en.State))
		}
		for _, u := range updates {
			w = append(w, fmt.Sprintf("%d %s.%s %s -> %s", u.Entry.Seq, u.Entry.Connector, u.Entry.Method, u.From, u.Entry.State))
		}
		writes = append(writes, w)
		return false, nil
	}
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1}, r.Reverted); diff != "" || len(r.Failures) != 0 {
		t.Fatalf("reverted (-want +got):\n%s\nfailures %v", diff, r.Failures)
	}
	want := [][]string{
		{"new 2 kv.add executing"},
		{"new 3 kv.add executing", "2 kv.add executing -> applied"},
		{"3 kv.add executing -> applied", "1 kv.noop applied -> reverted"},
	}
	if diff := cmp.Diff(want, writes); diff != "" {
		t.Errorf("the rollback's log writes (-want +got):\n%s", diff)
	}
}
