package runtime_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/procid"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// deadOwner returns an owner record of a process of this machine that has
// exited.
func deadOwner(t *testing.T, now time.Time) codemode.Owner {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	self := procid.Self()
	return codemode.Owner{ID: "own_dead", Host: self.Host, Boot: self.Boot, PID: cmd.Process.Pid, ProcessStart: "1",
		StartedAt: now, Heartbeat: now, Lease: runtime.DefaultLease}
}

// crashed writes, as a process that died would have left them, an owner
// record, a run claimed by it in status st, its log and journal.
func (e *env) crashed(o codemode.Owner, id string, st codemode.ExecStatus, log, journal []codemode.Entry) {
	e.t.Helper()
	ctx := e.ctx
	if err := e.store.RegisterOwner(ctx, o); err != nil {
		e.t.Fatal(err)
	}
	x := &codemode.Execution{ID: id, Code: `async () => {}`, Status: st, Owner: o.ID, CreatedAt: o.StartedAt, UpdatedAt: o.StartedAt}
	if err := e.store.CreateExecution(ctx, x); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.WriteEntries(ctx, log, nil); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.Journal(ctx, id, journal); err != nil {
		e.t.Fatal(err)
	}
}

// addEntry is entry seq of id: kv.add of key, in state with result.
func addEntry(id string, seq int, key string, state codemode.EntryState, result string) codemode.Entry {
	en := codemode.Entry{ExecutionID: id, Seq: seq, Kind: codemode.KindCall, Connector: "kv", Method: "add",
		Args: json.RawMessage(`{"key":"` + key + `","value":"v"}`), State: state}
	if result != "" {
		en.Result = json.RawMessage(result)
	}
	return en
}

// A run whose process died on this machine is recovered as soon as a
// process opens the store: it ends error saying what interrupted it, what
// its journal held is applied, its call in flight is unknown, its pending
// call rejected; the dead owner's record goes.
func TestRecoveryOfADeadProcess(t *testing.T) {
	clk := fixture.NewClock()
	k := newKV("kv")
	e := newEnv(t, setup{kv: k, clock: clk})
	o := deadOwner(t, clk.Now())
	e.crashed(o, "exec_dead", codemode.StatusRunning,
		[]codemode.Entry{addEntry("exec_dead", 1, "a", codemode.EntryApplied, `{"key":"a","previous":null}`), addEntry("exec_dead", 2, "b", codemode.EntryExecuting, "")},
		[]codemode.Entry{
			addEntry("exec_dead", 2, "b", codemode.EntryApplied, `{"key":"b","previous":null}`),
			addEntry("exec_dead", 3, "c", codemode.EntryExecuting, ""),
		})
	e.restart(setup{kv: k, clock: clk})
	x, log, err := e.rt.Execution(e.ctx, "exec_dead")
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusError || x.Owner != "" {
		t.Fatalf("after a restart: %s owned by %q, want error with no owner", x.Status, x.Owner)
	}
	for _, want := range []string{"interrupted", "is gone", "pid " + strconv.Itoa(o.PID)} {
		if !strings.Contains(x.Error, want) {
			t.Errorf("error %q does not say %q", x.Error, want)
		}
	}
	if diff := cmp.Diff([]string{"1 kv.add applied", "2 kv.add applied", "3 kv.add unknown"}, e.log("exec_dead")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if !strings.Contains(log[2].Error, "may or may not have taken effect") {
		t.Errorf("unknown entry's error = %q", log[2].Error)
	}
	owners, err := e.store.Owners(e.ctx)
	if err != nil || len(owners) != 0 {
		t.Errorf("owners after recovery = %v, %v; want the dead one removed", owners, err)
	}
	// Approve and reject are refused; rollback reverts what may be in
	// effect, the unknown call reported apart.
	if _, err := e.rt.Approve(e.ctx, "exec_dead", nil); err == nil {
		t.Error("approving a recovered run succeeded")
	}
	r, err := e.rt.Rollback(e.ctx, "exec_dead")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]int{2, 1}, r.Reverted); diff != "" {
		t.Errorf("reverted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3}, r.UnknownReverted); diff != "" {
		t.Errorf("unknown, reverted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "b", "a"}, k.revertedKeys()); diff != "" {
		t.Errorf("kv reverts (-want +got):\n%s", diff)
	}
}

// A running run the store cannot read (broken JSON in its row) does not
// stall recovery: the other runs of the dead process are recovered, and
// the unreadable one is left as it is.
func TestRecoveryGoesPastAnUnreadableRun(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{clock: clk})
	o := deadOwner(t, clk.Now())
	e.crashed(o, "exec_bad", codemode.StatusRunning, nil, nil)
	x := &codemode.Execution{ID: "exec_good", Code: `async () => {}`, Status: codemode.StatusRunning, Owner: o.ID, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
	if err := e.store.CreateExecution(e.ctx, x); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(e.ctx, `UPDATE executions SET clock = '{"seed":' WHERE id = 'exec_bad'`); err != nil {
		t.Fatal(err)
	}
	runtime.RecoverNow(e.ctx, e.rt)
	if got := e.status("exec_good"); got != codemode.StatusError {
		t.Errorf("the readable run of a dead process is %s after recovery, want error", got)
	}
	var status string
	if err := db.QueryRowContext(e.ctx, `SELECT status FROM executions WHERE id = 'exec_bad'`).Scan(&status); err != nil || status != "running" {
		t.Errorf("the unreadable run: %q, %v; want it left running", status, err)
	}
}

// A run whose owner is on another machine is recovered only once the
// owner's lease lapsed; a live process of this machine keeps its runs
// however old its heartbeat.
func TestRecoveryByLease(t *testing.T) {
	clk := fixture.NewClock()
	k := newKV("kv")
	e := newEnv(t, setup{kv: k, clock: clk})
	far := codemode.Owner{ID: "own_far", Host: "another-host", PID: 99, StartedAt: clk.Now(), Heartbeat: clk.Now(), Lease: 15 * time.Second}
	e.crashed(far, "exec_far", codemode.StatusRunning, []codemode.Entry{addEntry("exec_far", 1, "a", codemode.EntryExecuting, "")}, nil)
	self := procid.Self()
	live := codemode.Owner{ID: "own_live", Host: self.Host, Boot: self.Boot, PID: self.PID, ProcessStart: self.Start,
		StartedAt: clk.Now(), Heartbeat: clk.Now(), Lease: 15 * time.Second}
	e.crashed(live, "exec_live", codemode.StatusRunning, nil, nil)

	clk.Advance(14 * time.Second)
	runtime.RecoverNow(e.ctx, e.rt)
	if far, live := e.status("exec_far"), e.status("exec_live"); far != codemode.StatusRunning || live != codemode.StatusRunning {
		t.Fatalf("within the lease: exec_far %s, exec_live %s; want both running", far, live)
	}
	clk.Advance(2 * time.Second)
	e.restart(setup{kv: k, clock: clk}) // a process that opens the store now
	x, _, err := e.rt.Execution(e.ctx, "exec_far")
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "stopped renewing its 15s lease 16s ago") || !strings.Contains(x.Error, "another-host") {
		t.Errorf("after the lease: %s %q", x.Status, x.Error)
	}
	if diff := cmp.Diff([]string{"1 kv.add unknown"}, e.log("exec_far")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	clk.Advance(time.Hour)
	runtime.RecoverNow(e.ctx, e.rt)
	if got := e.status("exec_live"); got != codemode.StatusRunning {
		t.Errorf("the run of a live process of this machine is %s, want still running", got)
	}
}

// A run left running by a release without owners is recovered once it has
// not changed for a lease.
func TestRecoveryOfARunWithoutOwner(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{clock: clk})
	x := &codemode.Execution{ID: "exec_old", Code: "1", Status: codemode.StatusRunning, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
	if err := e.store.CreateExecution(e.ctx, x); err != nil {
		t.Fatal(err)
	}
	runtime.RecoverNow(e.ctx, e.rt)
	if got := e.status("exec_old"); got != codemode.StatusRunning {
		t.Fatalf("a run that just changed was recovered: %s", got)
	}
	clk.Advance(runtime.DefaultLease + time.Second)
	runtime.RecoverNow(e.ctx, e.rt)
	got, _, err := e.rt.Execution(e.ctx, "exec_old")
	if err != nil || got.Status != codemode.StatusError || !strings.Contains(got.Error, "older release") {
		t.Errorf("recovered: %+v, %v", got, err)
	}
}

// This process registers as an owner when it first claims a run, claims
// the runs it works on, renews its heartbeat (registering again if its
// record was removed), and removes its record when it closes. Its own
// runs are never recovered, even by another runtime of the same process.
func TestOwnerLifecycle(t *testing.T) {
	clk := fixture.NewClock()
	k := newKV("kv")
	e := newEnv(t, setup{kv: k, clock: clk})
	id := runtime.OwnerID(e.rt)
	owners := func() []codemode.Owner {
		t.Helper()
		got, err := e.store.Owners(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := owners(); len(got) != 0 {
		t.Fatalf("owners before any run = %v, want none", got)
	}
	entered, release := k.blockAt("add")
	done := make(chan codemode.Outcome)
	go func() { done <- e.run(`async () => kv.add({ key: "a" })`, nil) }()
	<-entered
	runs, err := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
	if err != nil || len(runs) != 1 || runs[0].Owner != id {
		t.Fatalf("running = %+v, %v; want one run owned by %s", runs, err, id)
	}
	got := owners()
	self := procid.Self()
	if len(got) != 1 || got[0].ID != id || got[0].PID != os.Getpid() || got[0].Host != self.Host || got[0].Lease != runtime.DefaultLease {
		t.Fatalf("owners = %+v", got)
	}
	// Another runtime of this process opens the store: the run is alive.
	other := newEnvAt(t, e.dbPath, setup{})
	runtime.RecoverNow(e.ctx, other.rt)
	if got := e.status(runs[0].ID); got != codemode.StatusRunning {
		t.Errorf("another runtime recovered the run of a live one: %s", got)
	}
	clk.Advance(time.Minute)
	runtime.Beat(e.ctx, e.rt)
	if got := owners(); len(got) != 1 || !got[0].Heartbeat.Equal(clk.Now()) {
		t.Errorf("after a heartbeat: %+v, want heartbeat %v", got, clk.Now())
	}
	if err := e.store.RemoveOwner(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	runtime.Beat(e.ctx, e.rt)
	if got := owners(); len(got) != 1 || got[0].ID != id {
		t.Errorf("a heartbeat after the record was removed: owners %+v, want it registered again", got)
	}
	close(release)
	o := <-done
	mustStatus(t, o, codemode.StatusCompleted)
	if x, _, _ := e.rt.Execution(e.ctx, o.ExecutionID); x.Owner != "" {
		t.Errorf("a completed run is owned by %q", x.Owner)
	}
	e.shutdown()
	if got, err := other.store.Owners(other.ctx); err != nil || len(got) != 0 {
		t.Errorf("owners after Close = %+v, %v; want none", got, err)
	}
}

// A rollback interrupted by the death of its process leaves a run that
// recovery ends error; rolling it back again reverts what is still
// applied, and not the calls the first rollback made.
func TestInterruptedRollback(t *testing.T) {
	clk := fixture.NewClock()
	k := newKV("kv")
	k.data["a"] = "new"
	e := newEnv(t, setup{kv: k, clock: clk})
	o := deadOwner(t, clk.Now())
	revertCall := addEntry("exec_rb", 3, "undo-b", codemode.EntryExecuting, "")
	revertCall.Reverts = 2
	e.crashed(o, "exec_rb", codemode.StatusRollingBack, []codemode.Entry{
		addEntry("exec_rb", 1, "a", codemode.EntryApplied, `{"key":"a","previous":"old"}`),
		addEntry("exec_rb", 2, "b", codemode.EntryReverted, `{"key":"b","previous":null}`),
		revertCall,
	}, nil)
	e.restart(setup{kv: k, clock: clk})
	x, _, err := e.rt.Execution(e.ctx, "exec_rb")
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "interrupted during a rollback") || !strings.Contains(x.Error, "roll it back again") {
		t.Fatalf("recovered: %s %q", x.Status, x.Error)
	}
	if diff := cmp.Diff([]string{"1 kv.add applied", "2 kv.add reverted", "3 kv.add unknown"}, e.log("exec_rb")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	r, err := e.rt.Rollback(e.ctx, "exec_rb")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]int{1}, r.Reverted); diff != "" || len(r.UnknownReverted) != 0 || len(r.Failures) != 0 {
		t.Errorf("second rollback: reverted (-want +got):\n%s\nunknown %v, failures %v", diff, r.UnknownReverted, r.Failures)
	}
	if v, _ := k.get("a"); v != "old" {
		t.Errorf("a = %q, want old", v)
	}
	// The run's history stays: rolled back, it still says what happened.
	if x, _, _ := e.rt.Execution(e.ctx, "exec_rb"); x.Status != codemode.StatusRolledBack || !strings.Contains(x.Error, "interrupted during a rollback") {
		t.Errorf("after the rollback: %s %q", x.Status, x.Error)
	}
}

// Every rollback reports every call that may be in effect: reverted,
// failed, or kept because nothing can revert it.
func TestRollbackReport(t *testing.T) {
	k := newKV("kv")
	k.noRevert["put"] = true
	k.revertFail["c"] = true
	e := newEnv(t, setup{kv: k})
	o := e.run(`async () => {
		await kv.get({ key: "x" });
		await kv.add({ key: "a", value: "1" });
		await kv.add({ key: "c", value: "1" });
		await kv.put({ key: "p", value: "1" });
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	want := codemode.Outcome{
		Status:      codemode.StatusRolledBack,
		ExecutionID: o.ExecutionID,
		Error:       "rolled back partly: 1 call reverted; call 3 (kv.add) stays as it was: its revert failed: kv: cannot revert c; call 4 (kv.put): nothing can revert it: it stays applied",
		Reverted:    []int{2},
		Failures:    []codemode.RevertFailure{{Seq: 3, Connector: "kv", Method: "add", Error: "kv: cannot revert c"}},
		NotReverted: []codemode.KeptCall{{Seq: 4, Connector: "kv", Method: "put", State: codemode.EntryApplied, Reason: "nothing can revert it: it stays applied"}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("rollback outcome (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1 kv.get applied", "2 kv.add reverted", "3 kv.add applied", "4 kv.put applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// An owner record's lease is bounded as read: a negative one does not make
// its runs recoverable at once (it counts as this process's lease), a huge
// one does not keep them from recovery forever (it counts as MaxLease).
func TestRecoveryBoundsAStoredLease(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{clock: clk})
	neg := codemode.Owner{ID: "own_neg", Host: "another-host", PID: 98, StartedAt: clk.Now(), Heartbeat: clk.Now(), Lease: -time.Hour}
	e.crashed(neg, "exec_neg", codemode.StatusRunning, nil, nil)
	huge := codemode.Owner{ID: "own_huge", Host: "another-host", PID: 99, StartedAt: clk.Now(), Heartbeat: clk.Now(), Lease: math.MaxInt64}
	e.crashed(huge, "exec_huge", codemode.StatusRunning, nil, nil)

	clk.Advance(runtime.DefaultLease - time.Second)
	runtime.RecoverNow(e.ctx, e.rt)
	if got := e.status("exec_neg"); got != codemode.StatusRunning {
		t.Fatalf("within this process's lease, the run of an owner with a negative lease is %s; want running", got)
	}
	clk.Advance(2 * time.Second)
	runtime.RecoverNow(e.ctx, e.rt)
	if got := e.status("exec_neg"); got != codemode.StatusError {
		t.Errorf("after this process's lease, the run of an owner with a negative lease is %s; want error", got)
	}
	if got := e.status("exec_huge"); got != codemode.StatusRunning {
		t.Fatalf("within MaxLease, the run of an owner with a huge lease is %s; want running", got)
	}
	clk.Advance(runtime.MaxLease)
	runtime.RecoverNow(e.ctx, e.rt)
	x, _, err := e.rt.Execution(e.ctx, "exec_huge")
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "stopped renewing its 24h0m0s lease") {
		t.Errorf("after MaxLease, the run of an owner with a huge lease: %s %q; want error", x.Status, x.Error)
	}
}

// A process whose owner record another removed (it took this one for
// gone, as a server whose clock runs ahead by more than the lease does,
// and recovered its runs) makes no further call with a side effect in the
// runs it held: they are another's now. Before, it registered again and
// its passes went on calling in runs recovery had ended.
func TestAProcessTakenForGoneStopsActing(t *testing.T) {
	k := newKV("kv")
	e := newEnv(t, setup{kv: k})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	k.hook = func(_ context.Context, tool string) error {
		if tool == "add" {
			once.Do(func() { close(entered); <-release })
		}
		return nil
	}
	done := make(chan error)
	go func() {
		// (Its outcome is the process's view of a run it no longer owns.)
		_, err := e.rt.Execute(e.ctx, `async () => { await kv.add({ key: "a" }); await kv.add({ key: "b" }) }`, nil)
		done <- err
	}()
	<-entered
	// What another process does to a process it takes for gone: it
	// recovers its run, then removes its record.
	runs, err := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
	if err != nil || len(runs) != 1 {
		t.Fatalf("running = %v, %v; want one run", runs, err)
	}
	x := runs[0]
	read := x.UpdatedAt
	x.Status, x.Owner, x.Error = codemode.StatusError, "", "interrupted: recovered by another process"
	if err := e.store.UpdateExecution(e.ctx, x, codemode.StatusRunning, read); err != nil {
		t.Fatal(err)
	}
	if err := e.store.RemoveOwner(e.ctx, runtime.OwnerID(e.rt)); err != nil {
		t.Fatal(err)
	}
	runtime.Beat(e.ctx, e.rt)
	close(release)
	<-done
	if n := k.count("add"); n != 1 {
		t.Errorf("kv.add was called %d times, want 1: the call after the takeover was made", n)
	}
	if _, ok := k.get("b"); ok {
		t.Error("the run another process recovered went on: b was added")
	}
	if got := e.status(x.ID); got != codemode.StatusError {
		t.Errorf("the recovered run is %s, want error as recovery left it", got)
	}
}

// A process that died between the two writes of an approval (the run
// claimed, running; its pending call not yet moved on) leaves a run that
// exactly one of two processes recovering at once ends: error, the
// pending call rejected, never made, one recovery logged.
func TestTwoProcessesRecoverAnInterruptedApprovalOnce(t *testing.T) {
	clk := fixture.NewClock()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	k := newKV("kv")
	a := newEnv(t, setup{kv: k, clock: clk, logger: logger})
	b := newEnvAt(t, a.dbPath, setup{kv: k, clock: clk, logger: logger})
	pending := addEntry("exec_half", 1, "a", codemode.EntryPending, "")
	pending.Method = "put"
	a.crashed(deadOwner(t, clk.Now()), "exec_half", codemode.StatusRunning, []codemode.Entry{pending}, nil)
	var wg sync.WaitGroup
	for _, e := range []*env{a, b} {
		wg.Go(func() { runtime.RecoverNow(e.ctx, e.rt) })
	}
	wg.Wait()
	x, _, err := a.rt.Execution(a.ctx, "exec_half")
	if err != nil || x.Status != codemode.StatusError {
		t.Fatalf("the run = %+v, %v; want error", x, err)
	}
	if diff := cmp.Diff([]string{"1 kv.put rejected"}, a.log("exec_half")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "recovered an interrupted run"); n != 1 {
		t.Errorf("recovered %d times, want once:\n%s", n, logs.String())
	}
	if n := k.count("put"); n != 0 {
		t.Errorf("kv.put was made %d times, want never", n)
	}
}

// Recovery, every heartbeat, reads of the claimed runs what it decides
// on, not their output: 10 runs of this process that printed
// 512 kB each (5 MB) make it allocate far less than that.
func TestRecoveryReadsNotTheRunsOutput(t *testing.T) {
	e := newEnv(t, setup{})
	const runs, size = 10, 512 << 10
	for i := range runs {
		x := &codemode.Execution{ID: "exec_big" + strconv.Itoa(i), Code: `async () => {}`, Status: codemode.StatusRunning,
			Owner: runtime.OwnerID(e.rt), Logs: []string{strings.Repeat("o", size)}}
		if err := e.store.CreateExecution(e.ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	runtime.RecoverNow(e.ctx, e.rt)
	goruntime.ReadMemStats(&m1)
	if n := m1.TotalAlloc - m0.TotalAlloc; n > runs*size/10 {
		t.Errorf("recovery among %d running runs that printed %d bytes each allocated %d bytes, want at most %d", runs, size, n, runs*size/10)
	}
}
