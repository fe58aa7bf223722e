package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// countingStore wraps the real store of an env: it counts the transactions
// its writes commit, and lets a test look at or fail the log writes. The
// hooks are set before the store is used.
type countingStore struct {
	runtime.Store

	// beforeWrite, if set, runs before each WriteEntries; a non-nil error
	// is returned instead of writing, and drop makes the write vanish as if
	// the process had died before it (nil returned, nothing written).
	beforeWrite func(updates []runtime.EntryUpdate, insert *runtime.Entry) (drop bool, err error)
	// beforeStatus, if set, runs before each UpdateExecution.
	beforeStatus func(e *runtime.Execution)

	commits atomic.Int64
}

// wrap is a setup.wrap: it keeps s as the real store.
func (c *countingStore) wrap(s runtime.Store) runtime.Store {
	c.Store = s
	return c
}

// count adds a commit when a write succeeded.
func (c *countingStore) count(err error) error {
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

func (c *countingStore) CreateExecution(ctx context.Context, e *runtime.Execution) error {
	return c.count(c.Store.CreateExecution(ctx, e))
}

func (c *countingStore) UpdateExecution(ctx context.Context, e *runtime.Execution, from runtime.ExecStatus) error {
	if c.beforeStatus != nil {
		c.beforeStatus(e)
	}
	return c.count(c.Store.UpdateExecution(ctx, e, from))
}

func (c *countingStore) DeleteExecution(ctx context.Context, id string) error {
	return c.count(c.Store.DeleteExecution(ctx, id))
}

func (c *countingStore) PruneExecutions(ctx context.Context, keep int) (int, error) {
	n, err := c.Store.PruneExecutions(ctx, keep)
	if n > 0 {
		c.count(err)
	}
	return n, err
}

func (c *countingStore) InsertEntry(ctx context.Context, e runtime.Entry) error {
	return c.count(c.Store.InsertEntry(ctx, e))
}

func (c *countingStore) UpdateEntry(ctx context.Context, e runtime.Entry, from runtime.EntryState) error {
	return c.count(c.Store.UpdateEntry(ctx, e, from))
}

func (c *countingStore) WriteEntries(ctx context.Context, updates []runtime.EntryUpdate, insert *runtime.Entry) error {
	if c.beforeWrite != nil {
		drop, err := c.beforeWrite(updates, insert)
		if drop || err != nil {
			return err
		}
	}
	err := c.Store.WriteEntries(ctx, updates, insert)
	if len(updates) == 0 && insert == nil {
		return err
	}
	return c.count(err)
}

func (c *countingStore) SaveSnippet(ctx context.Context, s runtime.Snippet) error {
	return c.count(c.Store.SaveSnippet(ctx, s))
}

func (c *countingStore) DeleteSnippet(ctx context.Context, name string) error {
	return c.count(c.Store.DeleteSnippet(ctx, name))
}

// entries renders an execution's log as "seq name state value", where value
// is the result, or the error of an entry in error.
func (e *env) entries(id string) []string {
	e.t.Helper()
	_, log, err := e.rt.Execution(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Execution(%s): %v", id, err)
	}
	return renderEntries(log)
}

func renderEntries(log []runtime.Entry) []string {
	out := make([]string, len(log))
	for i, en := range log {
		name := en.Connector + "." + en.Method
		if en.Kind == runtime.KindStep {
			name = fmt.Sprintf("step(%s)", en.Name)
		}
		val := string(en.Result)
		if en.State == runtime.EntryError {
			val = en.Error
		}
		out[i] = strings.TrimSpace(fmt.Sprintf("%d %s %s %s", en.Seq, name, en.State, val))
	}
	return out
}

// addEntries is the log of n applied kv.add calls with keys k0, k1, ….
func addEntries(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf(`%d kv.add applied {"key":"k%d","previous":null}`, i+1, i)
	}
	return out
}

// A call's result is written with the next log write of its pass, not in a
// commit of its own: a run of N calls commits N+3 transactions (the
// execution, N inserts carrying the previous result, the last result, the
// final status), not 2N+2; a run without calls commits nothing more than
// before. The log ends complete.
func TestOneCommitPerCall(t *testing.T) {
	loop := func(n int) string {
		return fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await kv.add({ key: "k" + i, value: "v" }); return "ok" }`, n)
	}
	tests := []struct {
		name    string
		code    string
		want    []string
		commits int64
	}{
		{"no calls", `1 + 1`, []string{}, 2},
		{"one call", loop(1), addEntries(1), 4},
		{"three calls", loop(3), addEntries(3), 6},
		{"twenty calls", loop(20), addEntries(20), 23},
		{"steps", `async () => {
			const a = await codemode.step("a", async () => 41);
			await kv.add({ key: "k0", value: String(a) });
			return await codemode.step("b", async () => a + 1);
		}`, []string{"1 step(a) applied 41", `2 kv.add applied {"key":"k0","previous":null}`, "3 step(b) applied 42"}, 6},
		{"failed call", `async () => {
			try { await kv.fail({ reason: "no" }) } catch (e) { return e.message }
		}`, []string{"1 kv.fail error kv failed: no"}, 4},
		{"failed step", `async () => {
			try { await codemode.step("s", async () => { throw new Error("boom") }) } catch (e) { return e.message }
		}`, []string{"1 step(s) error Error: boom"}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := &countingStore{}
			e := newEnv(t, setup{wrap: cs.wrap})
			o := e.run(tt.code, nil)
			mustStatus(t, o, runtime.StatusCompleted)
			if diff := cmp.Diff(tt.want, e.entries(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if got := cs.commits.Load(); got != tt.commits {
				t.Errorf("commits = %d, want %d", got, tt.commits)
			}
		})
	}
}

// Fifty concurrent calls: their results batch into the inserts of the
// calls decided after them and a final write; every entry ends applied with
// its own result.
func TestPromiseAllDeferredResults(t *testing.T) {
	cs := &countingStore{}
	e := newEnv(t, setup{wrap: cs.wrap})
	const n = 50
	o := e.run(fmt.Sprintf(`async () => {
		const rs = await Promise.all(Array.from({ length: %d }, (_, i) => kv.add({ key: "k" + i, value: "v" })));
		return rs.map(r => r.key).join(",");
	}`, n), nil)
	mustStatus(t, o, runtime.StatusCompleted)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	if got, want := resultOf[string](t, o), strings.Join(keys, ","); got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
	if diff := cmp.Diff(addEntries(n), e.entries(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	// The execution, n inserts, the status, and a final write unless the
	// last result rode on the last insert.
	if got := cs.commits.Load(); got < n+2 || got > n+3 {
		t.Errorf("commits = %d, want %d or %d", got, n+2, n+3)
	}
}

// pauseAfterAdds returns a store and a kv for pauseAfterAddsCode: its two
// kv.add calls return only once the gated kv.put is logged pending (kv.get
// returns once both are in the connector, so the put is decided after
// them), so their results come after the pass's last insert and only the
// final write of the pass records them. The store snapshots the log when
// the run's status becomes paused.
func pauseAfterAdds(t *testing.T) (*countingStore, *kv, func() []string) {
	t.Helper()
	var (
		mu       sync.Mutex
		snapshot []string
	)
	pending := make(chan struct{})
	var once sync.Once
	cs := &countingStore{}
	cs.beforeWrite = func(_ []runtime.EntryUpdate, insert *runtime.Entry) (bool, error) {
		if insert != nil && insert.State == runtime.EntryPending {
			// Let the adds return once the pending insert is committed:
			// after this hook, WriteEntries writes it, and the adds'
			// results need p.mu, which the writer holds until then.
			once.Do(func() { close(pending) })
		}
		return false, nil
	}
	cs.beforeStatus = func(x *runtime.Execution) {
		if x.Status != runtime.StatusPaused {
			return
		}
		log, err := cs.Store.Entries(context.Background(), x.ID)
		if err != nil {
			t.Errorf("Entries at pause: %v", err)
		}
		mu.Lock()
		snapshot = renderEntries(log)
		mu.Unlock()
	}
	k := newKV("kv")
	var adds, gets atomic.Int64
	entered := make(chan struct{}, 2)
	k.hook = func(ctx context.Context, tool string) error {
		switch {
		case tool == "add" && adds.Add(1) <= 2:
			entered <- struct{}{}
			<-pending
		case tool == "get" && gets.Add(1) == 1:
			<-entered
			<-entered
		}
		return nil
	}
	return cs, k, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return snapshot
	}
}

const pauseAfterAddsCode = `async () => {
	const a = kv.add({ key: "k0", value: "v" });
	const b = kv.add({ key: "k1", value: "v" });
	await kv.get({ key: "x" });
	const p = kv.put({ key: "c", value: "v" });
	return (await Promise.all([a, b, p])).map(r => r.key).join(",");
}`

// getEntry is the log entry of pauseAfterAddsCode's kv.get.
const getEntry = `3 kv.get applied {"key":"x","value":null}`

// A pass that pauses with calls in flight writes their results before the
// run becomes paused; approve replays them from the log without calling
// the connector again.
func TestPauseFlushesDeferredResults(t *testing.T) {
	cs, k, atPause := pauseAfterAdds(t)
	e := newEnv(t, setup{kv: k, wrap: cs.wrap})
	o := e.run(pauseAfterAddsCode, nil)
	mustStatus(t, o, runtime.StatusPaused)
	want := append(addEntries(2), getEntry, "4 kv.put pending")
	if diff := cmp.Diff(want, atPause()); diff != "" {
		t.Errorf("log when the run became paused (-want +got):\n%s", diff)
	}
	// The execution, four inserts, the adds' results, the status.
	if got := cs.commits.Load(); got != 7 {
		t.Errorf("commits = %d, want 7", got)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, runtime.StatusCompleted)
	if got := resultOf[string](t, a); got != "k0,k1,c" {
		t.Errorf("result = %q, want k0,k1,c", got)
	}
	if got := k.count("add"); got != 2 {
		t.Errorf("add ran %d times, want 2 (replayed, not called again)", got)
	}
	if got := k.count("put"); got != 1 {
		t.Errorf("put ran %d times, want 1", got)
	}
	want = append(addEntries(2), getEntry, `4 kv.put applied {"key":"c","previous":null}`)
	if diff := cmp.Diff(want, e.entries(o.ExecutionID)); diff != "" {
		t.Errorf("log after approve (-want +got):\n%s", diff)
	}
}

// The at-least-once window: when a pass's deferred results never reach the
// store (the process died before its final write), the calls stay
// executing and replay executes them again.
func TestLostDeferredResultsRunAgainOnReplay(t *testing.T) {
	cs, k, atPause := pauseAfterAdds(t)
	onPending := cs.beforeWrite
	var dropped atomic.Bool
	cs.beforeWrite = func(updates []runtime.EntryUpdate, insert *runtime.Entry) (bool, error) {
		if insert == nil && len(updates) > 0 && dropped.CompareAndSwap(false, true) {
			return true, nil // the final write of the first pass is lost
		}
		return onPending(updates, insert)
	}
	e := newEnv(t, setup{kv: k, wrap: cs.wrap})
	o := e.run(pauseAfterAddsCode, nil)
	mustStatus(t, o, runtime.StatusPaused)
	want := []string{"1 kv.add executing", "2 kv.add executing", getEntry, "4 kv.put pending"}
	if diff := cmp.Diff(want, atPause()); diff != "" {
		t.Errorf("log when the run became paused (-want +got):\n%s", diff)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, runtime.StatusCompleted)
	if got := k.count("add"); got != 4 {
		t.Errorf("add ran %d times, want 4 (twice cut off, twice on replay)", got)
	}
	if got := k.count("put"); got != 1 {
		t.Errorf("put ran %d times, want 1", got)
	}
	want = []string{
		`1 kv.add applied {"key":"k0","previous":"v"}`,
		`2 kv.add applied {"key":"k1","previous":"v"}`,
		getEntry,
		`4 kv.put applied {"key":"c","previous":null}`,
	}
	if diff := cmp.Diff(want, e.entries(o.ExecutionID)); diff != "" {
		t.Errorf("log after approve (-want +got):\n%s", diff)
	}
}

// A failed write of deferred results ends the run with an internal failure:
// with the final write, the run that completed is error and its call is
// settled as not completed; with the write that carries the next call's
// insert, the next call never runs and the final write records the result.
func TestDeferredWriteFailure(t *testing.T) {
	errDisk := errors.New("disk full")
	tests := []struct {
		name string
		// fail reports whether this WriteEntries fails (once).
		fail func(updates []runtime.EntryUpdate, insert *runtime.Entry) bool
		want []string
		adds int
	}{
		{"final write", func(u []runtime.EntryUpdate, ins *runtime.Entry) bool { return ins == nil && len(u) > 0 },
			append(addEntries(1), "2 kv.add error not completed: the run ended before this call's result was recorded; it may or may not have taken effect"), 2},
		{"with an insert", func(u []runtime.EntryUpdate, ins *runtime.Entry) bool { return ins != nil && len(u) > 0 },
			addEntries(1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed atomic.Bool
			cs := &countingStore{beforeWrite: func(u []runtime.EntryUpdate, ins *runtime.Entry) (bool, error) {
				if tt.fail(u, ins) && failed.CompareAndSwap(false, true) {
					return false, errDisk
				}
				return false, nil
			}}
			e := newEnv(t, setup{wrap: cs.wrap})
			o, err := e.rt.Execute(e.ctx, `async () => {
				await kv.add({ key: "k0", value: "v" });
				await kv.add({ key: "k1", value: "v" });
				return "ok";
			}`, nil)
			if !errors.Is(err, errDisk) {
				t.Errorf("Execute error = %v, want the store's failure", err)
			}
			mustStatus(t, o, runtime.StatusError)
			if !strings.Contains(o.Error, "internal failure") || !strings.Contains(o.Error, "disk full") {
				t.Errorf("outcome error = %q, want an internal failure naming the cause", o.Error)
			}
			if !failed.Load() {
				t.Fatal("the failing write never came")
			}
			if diff := cmp.Diff(tt.want, e.entries(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if got := e.kv.count("add"); got != tt.adds {
				t.Errorf("add ran %d times, want %d", got, tt.adds)
			}
		})
	}
}

// Rollback reads the log the pass wrote: the results of concurrent calls
// are all there, so each call is reverted with its own result.
func TestRollbackAfterConcurrentCalls(t *testing.T) {
	const n = 10
	k := newKV("kv")
	for i := range n {
		k.data[fmt.Sprintf("k%d", i)] = fmt.Sprintf("old%d", i)
	}
	e := newEnv(t, setup{kv: k})
	o := e.run(fmt.Sprintf(`async () => {
		await Promise.all(Array.from({ length: %d }, (_, i) => kv.add({ key: "k" + i, value: "new" })));
	}`, n), nil)
	mustStatus(t, o, runtime.StatusCompleted)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, runtime.StatusRolledBack)
	var wantSeqs []int
	for seq := n; seq >= 1; seq-- {
		wantSeqs = append(wantSeqs, seq)
	}
	if diff := cmp.Diff(wantSeqs, r.Reverted); diff != "" || len(r.Failures) != 0 {
		t.Errorf("reverted (-want +got):\n%s\nfailures: %v", diff, r.Failures)
	}
	for i := range n {
		key := fmt.Sprintf("k%d", i)
		if v, _ := k.get(key); v != fmt.Sprintf("old%d", i) {
			t.Errorf("%s = %q after rollback, want old%d", key, v, i)
		}
	}
}
