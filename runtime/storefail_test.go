package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// errIO is the failure of a store whose disk is full or gone.
var errIO = errors.New("disk I/O error")

// failingStore wraps the real store of an env; while down, every call
// fails with errIO, as a SQLite file on a full or failing disk does (or a
// database server that went away). The hooks are set before the store is
// used.
type failingStore struct {
	codemode.Store
	down atomic.Bool

	// afterWrite, if set, runs after each WriteEntries that succeeded.
	afterWrite func(inserts []codemode.Entry, updates []codemode.EntryUpdate)
	// createFails makes CreateExecution fail with errIO after it wrote, as
	// a commit whose answer was lost does.
	createFails bool
}

func (f *failingStore) wrap(s codemode.Store) codemode.Store {
	f.Store = s
	return f
}

func (f *failingStore) fail() error {
	if f.down.Load() {
		return errIO
	}
	return nil
}

func (f *failingStore) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	if err := f.fail(); err != nil {
		return err
	}
	if err := f.Store.CreateExecution(ctx, e); err != nil {
		return err
	}
	if f.createFails {
		return errIO
	}
	return nil
}

func (f *failingStore) GetExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.GetExecution(ctx, id)
}

func (f *failingStore) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, since time.Time) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.UpdateExecution(ctx, e, from, since)
}

func (f *failingStore) ListExecutions(ctx context.Context, flt codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.ListExecutions(ctx, flt)
}

func (f *failingStore) Entries(ctx context.Context, id string) ([]codemode.Entry, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.Entries(ctx, id)
}

func (f *failingStore) InsertEntry(ctx context.Context, e codemode.Entry) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.InsertEntry(ctx, e)
}

func (f *failingStore) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.UpdateEntry(ctx, e, from)
}

func (f *failingStore) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) error {
	if err := f.fail(); err != nil {
		return err
	}
	if err := f.Store.WriteEntries(ctx, inserts, updates); err != nil {
		return err
	}
	if f.afterWrite != nil {
		f.afterWrite(inserts, updates)
	}
	return nil
}

func (f *failingStore) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.RecoverExecution(ctx, e, from, owner, note)
}

func (f *failingStore) RegisterOwner(ctx context.Context, o codemode.Owner) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.RegisterOwner(ctx, o)
}

func (f *failingStore) Heartbeat(ctx context.Context, id string, at time.Time) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.Heartbeat(ctx, id, at)
}

func (f *failingStore) Owners(ctx context.Context) ([]codemode.Owner, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.Owners(ctx)
}

func (f *failingStore) RemoveOwner(ctx context.Context, id string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.RemoveOwner(ctx, id)
}

// downAfterWriteAhead takes f down once the entry of call seq is written
// (ahead of the call, which then runs with the store gone).
func (f *failingStore) downAfterWriteAhead(seq int) {
	f.afterWrite = func(inserts []codemode.Entry, _ []codemode.EntryUpdate) {
		for _, en := range inserts {
			if en.Seq == seq {
				f.down.Store(true)
			}
		}
	}
}

// stored is run id as the real store has it.
func (e *env) stored(id string) *codemode.Execution {
	e.t.Helper()
	x, err := e.store.GetExecution(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return x
}

// The store fails after a call with a side effect was written ahead: the
// call runs, but neither its result nor the run's end can be written.
// The run stays claimed by this process, whose lease is alive — before,
// forever. At the first heartbeat after the store is back, this process
// writes what it held: the result, and the run's end, completed.
func TestEndWrittenWhenTheStoreIsBack(t *testing.T) {
	fs := &failingStore{}
	fs.downAfterWriteAhead(2)
	e := newEnv(t, setup{wrap: fs.wrap, groupAge: time.Hour})
	o, err := e.rt.Execute(e.ctx, `async () => { await kv.add({ key: "k0" }); await kv.add({ key: "k1" }); return "done"; }`, nil)
	if !errors.Is(err, errIO) {
		t.Fatalf("Execute error = %v, want the store's failure", err)
	}
	if x := e.stored(o.ExecutionID); x.Status != codemode.StatusRunning || x.Owner != runtime.OwnerID(e.rt) {
		t.Fatalf("while the store is down the run is %s owned by %q, want running, owned by this process", x.Status, x.Owner)
	}
	if got := e.kv.count("add"); got != 2 {
		t.Fatalf("add ran %d times, want 2", got)
	}

	runtime.Tick(e.ctx, e.rt) // the store is still down: nothing changes
	if x := e.stored(o.ExecutionID); x.Status != codemode.StatusRunning {
		t.Fatalf("after a heartbeat with the store down the run is %s, want running", x.Status)
	}
	fs.down.Store(false)
	runtime.Tick(e.ctx, e.rt)
	x := e.stored(o.ExecutionID)
	if x.Status != codemode.StatusCompleted || x.Owner != "" || string(x.Result) != `"done"` {
		t.Fatalf("after a heartbeat with the store back the run is %s owned by %q with result %s (error %q), want completed with \"done\"", x.Status, x.Owner, x.Result, x.Error)
	}
	want := []string{`1 kv.add applied {"key":"k0","previous":null}`, `2 kv.add applied {"key":"k1","previous":null}`}
	if diff := cmp.Diff(want, e.entries(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// The write that creates a run fails, yet it took effect (the answer of
// its commit was lost): nothing runs the program, and the run is claimed
// by this process. At the next heartbeat this process, which holds no
// request of it, recovers it.
func TestClaimThatFailedButTookEffectIsRecovered(t *testing.T) {
	fs := &failingStore{createFails: true}
	e := newEnv(t, setup{wrap: fs.wrap})
	if _, err := e.rt.Execute(e.ctx, `async () => { await kv.add({ key: "k0" }); }`, nil); !errors.Is(err, errIO) {
		t.Fatalf("Execute error = %v, want the store's failure", err)
	}
	runs, err := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
	if err != nil || len(runs) != 1 || runs[0].Owner != runtime.OwnerID(e.rt) {
		t.Fatalf("running runs = %v, %v; want one, owned by this process", runs, err)
	}
	id := runs[0].ID
	runtime.Tick(e.ctx, e.rt)
	x := e.stored(id)
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "interrupted") || !strings.Contains(x.Error, "store failed") {
		t.Fatalf("after a heartbeat the run is %s (%q), want error, interrupted by the store's failure", x.Status, x.Error)
	}
	if got := e.kv.count("add"); got != 0 {
		t.Errorf("add ran %d times, want 0", got)
	}
}

// A pass runs its program's first call, then waits in a read-only call
// while the store is down for longer than the lease: other processes may
// have recovered the run meanwhile, so once the store is back the pass
// makes no further call with a side effect, and the run ends in error
// saying why.
func TestLapsedLeaseStopsSideEffects(t *testing.T) {
	const lease = 500 * time.Millisecond
	fs := &failingStore{}
	k := newKV("kv")
	reached, resume := k.blockAt("get")
	e := newEnv(t, setup{kv: k, wrap: fs.wrap, lease: lease})
	type result struct {
		o   codemode.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := e.rt.Execute(e.ctx, `async () => { await kv.add({ key: "k0" }); await kv.get({ key: "k0" }); await kv.add({ key: "k1" }); }`, nil)
		done <- result{o, err}
	}()
	<-reached
	fs.down.Store(true)
	var id string
	fixture.Until(t, "the lease lapses after the store went down", func() bool {
		runs, _ := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
		if len(runs) != 1 {
			return false
		}
		id = runs[0].ID
		return runtime.MayAct(e.rt, id) != nil
	})
	fs.down.Store(false)
	close(resume)
	r := <-done
	if r.err == nil {
		t.Errorf("Execute succeeded, want the lapse as an internal failure")
	}
	if got := k.count("add"); got != 1 {
		t.Errorf("add ran %d times, want 1: no side effect after the lease lapsed", got)
	}
	x := e.stored(id)
	if x.Status != codemode.StatusError || !strings.Contains(x.Error, "could not renew its lease") {
		t.Errorf("the run is %s (%q), want error saying the lease lapsed", x.Status, x.Error)
	}
	var args struct{ Key string }
	for _, en := range logOf(t, e, id) {
		if err := json.Unmarshal(en.Args, &args); err == nil && args.Key == "k1" {
			t.Errorf("call %d (add k1) is logged %s, want it never logged", en.Seq, en.State)
		}
	}
}

// logOf is the stored log of run id.
func logOf(t *testing.T, e *env, id string) []codemode.Entry {
	t.Helper()
	log, err := e.store.Entries(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// A pass stops to wait for a downstream task while the store fails, so
// the run's end (waiting) is left to write once the store answers; the
// store is back when the runtime closes. Close writes that end — the run
// waits, for a serving process to take over — and returns: before, it
// held the owner's lock while writing it, and the write, which makes
// this process the waiting run's owner, waited for that lock for ever.
func TestCloseWritesTheWaitOfAStrandedPass(t *testing.T) {
	fs := &failingStore{}
	fs.afterWrite = func(_ []codemode.Entry, updates []codemode.EntryUpdate) {
		for _, u := range updates {
			if u.Entry.State == codemode.EntryWaiting {
				fs.down.Store(true) // the task's id is logged; nothing after it is
			}
		}
	}
	e := newEnv(t, setup{mcp: true, fxTasks: true, wrap: fs.wrap, lease: time.Hour})
	o, err := e.rt.Execute(e.ctx, `return await fx.task_counter({ name: "a", ms: 60000 })`, nil)
	if !errors.Is(err, errIO) {
		t.Fatalf("Execute = %+v, %v; want the store's failure", o, err)
	}
	fs.down.Store(false)
	if err := e.rt.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.rt = nil
	if x := e.stored(o.ExecutionID); x.Status != codemode.StatusWaiting {
		t.Errorf("after Close the run is %s (%q), want waiting", x.Status, x.Error)
	}
	if owners, err := e.store.Owners(e.ctx); err != nil || len(owners) != 0 {
		t.Errorf("owner records after Close = %v, %v; want none", owners, err)
	}
}
