package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// countingStore wraps the real store of an env: it counts the transactions
// its writes commit, and lets a test look at or fail the log writes. The
// hooks are set before the store is used.
type countingStore struct {
	codemode.Store

	// beforeWrite, if set, runs before each WriteEntries; a non-nil error
	// is returned instead of writing, and drop makes the write vanish as if
	// the process had died before it (nil returned, nothing written).
	beforeWrite func(inserts []codemode.Entry, updates []codemode.EntryUpdate) (drop bool, err error)
	// beforeStatus, if set, runs before each UpdateExecution.
	beforeStatus func(e *codemode.Execution)
	// withJournal makes wrap return a store with the real store's journal
	// (codemode.Journaler), whose records are kept in journaled; without
	// it the runtime commits instead of journaling.
	withJournal bool
	// beforeJournal, if set, runs before each Journal; a non-nil error is
	// returned instead of journaling.
	beforeJournal func(entries []codemode.Entry) error

	commits  atomic.Int64
	journals atomic.Int64 // Journal calls

	jmu       sync.Mutex
	journaled map[int]codemode.Entry // the latest record of each seq; guarded by jmu
}

// wrap is a setup.wrap: it keeps s as the real store.
func (c *countingStore) wrap(s codemode.Store) codemode.Store {
	c.Store = s
	if c.withJournal {
		return journalingStore{c}
	}
	return c
}

// journalingStore is a countingStore with the real store's journal.
type journalingStore struct{ *countingStore }

func (j journalingStore) Journal(ctx context.Context, id string, entries []codemode.Entry) error {
	if j.beforeJournal != nil {
		if err := j.beforeJournal(entries); err != nil {
			return err
		}
	}
	if err := j.Store.(codemode.Journaler).Journal(ctx, id, entries); err != nil {
		return err
	}
	j.journals.Add(1)
	j.jmu.Lock()
	defer j.jmu.Unlock()
	if j.journaled == nil {
		j.journaled = map[int]codemode.Entry{}
	}
	for _, e := range entries {
		j.journaled[e.Seq] = e
	}
	return nil
}

func (j journalingStore) DropJournal(ctx context.Context, id string) error {
	return j.Store.(codemode.Journaler).DropJournal(ctx, id)
}

// durable returns the log of the running execution as a crash would leave
// it for recovery: the entries written, updated by the latest journal
// record of each seq.
func (c *countingStore) durable(t *testing.T) []codemode.Entry {
	t.Helper()
	ctx := context.Background()
	runs, err := c.Store.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
	if err != nil || len(runs) != 1 {
		t.Fatalf("running executions = %d, %v; want 1", len(runs), err)
	}
	log, err := c.Store.Entries(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	c.jmu.Lock()
	defer c.jmu.Unlock()
	bySeq := map[int]codemode.Entry{}
	for _, e := range log {
		bySeq[e.Seq] = e
	}
	for seq, e := range c.journaled {
		if cur, ok := bySeq[seq]; !ok || cur.State == codemode.EntryExecuting {
			bySeq[seq] = e
		}
	}
	out := make([]codemode.Entry, 0, len(bySeq))
	for _, e := range bySeq {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// count adds a commit when a write succeeded.
func (c *countingStore) count(err error) error {
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

func (c *countingStore) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	return c.count(c.Store.CreateExecution(ctx, e))
}

func (c *countingStore) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, since time.Time) error {
	if c.beforeStatus != nil {
		c.beforeStatus(e)
	}
	return c.count(c.Store.UpdateExecution(ctx, e, from, since))
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

func (c *countingStore) InsertEntry(ctx context.Context, e codemode.Entry) error {
	return c.count(c.Store.InsertEntry(ctx, e))
}

func (c *countingStore) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	return c.count(c.Store.UpdateEntry(ctx, e, from))
}

func (c *countingStore) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) error {
	if c.beforeWrite != nil {
		drop, err := c.beforeWrite(inserts, updates)
		if drop || err != nil {
			return err
		}
	}
	err := c.Store.WriteEntries(ctx, inserts, updates)
	if len(updates) == 0 && len(inserts) == 0 {
		return err
	}
	return c.count(err)
}

// hasPending reports whether inserts log a call pending.
func hasPending(inserts []codemode.Entry) bool {
	for _, e := range inserts {
		if e.State == codemode.EntryPending {
			return true
		}
	}
	return false
}

func (c *countingStore) SaveSnippet(ctx context.Context, s codemode.Snippet) error {
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

func renderEntries(log []codemode.Entry) []string {
	out := make([]string, len(log))
	for i, en := range log {
		name := en.Connector + "." + en.Method
		if en.Kind == codemode.KindStep {
			name = fmt.Sprintf("step(%s)", en.Name)
		}
		val := string(en.Result)
		if en.State == codemode.EntryError {
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

// getEntries is the log of n applied kv.get calls (read-only) with keys
// k0, k1, ….
func getEntries(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf(`%d kv.get applied {"key":"k%d","value":null}`, i+1, i)
	}
	return out
}

// loop is a program that calls kv.<method>({key: "k"+i}) n times in turn.
func loop(method string, n int) string {
	return fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await kv.%s({ key: "k" + i, value: "v" }); return "ok" }`, n, method)
}

// A pass writes its log in groups: a run of N read-only calls or steps
// that takes less than a group's age commits three transactions whatever
// N is (the execution, one write of the whole log at the end of the pass,
// the final status). A call that may have a side effect is journaled
// before it is made (write-ahead), so with the store's journal the commits
// are the same; without one it is committed before it is made, with the
// results queued before it: N+3 commits for N such calls. Written as each
// entry is queued (a group age of 0), a result still rides with the next
// entry's write: N+3 commits. The log ends complete either way.
func TestGroupedLogWrites(t *testing.T) {
	tests := []struct {
		name             string
		code             string
		want             []string
		grouped, through int64 // commits with long groups, and written through
		commitGrouped    int64 // commits with long groups and no journal (if it differs)
		journals         int64 // journal records written with long groups
	}{
		{"no calls", `1 + 1`, []string{}, 2, 2, 0, 0},
		{"one read-only call", loop("get", 1), getEntries(1), 3, 4, 0, 0},
		{"three read-only calls", loop("get", 3), getEntries(3), 3, 6, 0, 0},
		{"twenty read-only calls", loop("get", 20), getEntries(20), 3, 23, 0, 0},
		{"one side effect", loop("add", 1), addEntries(1), 3, 4, 4, 2},
		{"three side effects", loop("add", 3), addEntries(3), 3, 6, 6, 6},
		{"twenty side effects", loop("add", 20), addEntries(20), 3, 23, 23, 40},
		{"steps", `async () => {
			const a = await codemode.step("a", async () => 41);
			await kv.get({ key: "k0" });
			return await codemode.step("b", async () => a + 1);
		}`, []string{"1 step(a) applied 41", `2 kv.get applied {"key":"k0","value":null}`, "3 step(b) applied 42"}, 3, 6, 0, 0},
		{"steps around a side effect", `async () => {
			const a = await codemode.step("a", async () => 41);
			await kv.add({ key: "k0", value: String(a) });
			return await codemode.step("b", async () => a + 1);
		}`, []string{"1 step(a) applied 41", `2 kv.add applied {"key":"k0","previous":null}`, "3 step(b) applied 42"}, 3, 6, 4, 2},
		{"failed call", `async () => {
			try { await kv.fail({ reason: "no" }) } catch (e) { return e.message }
		}`, []string{"1 kv.fail error kv failed: no"}, 3, 4, 4, 2},
		{"failed step", `async () => {
			try { await codemode.step("s", async () => { throw new Error("boom") }) } catch (e) { return e.message }
		}`, []string{"1 step(s) error Error: boom"}, 3, 4, 0, 0},
	}
	for _, tt := range tests {
		for _, journal := range []bool{true, false} {
			for _, through := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/journal=%v/writeThrough=%v", tt.name, journal, through), func(t *testing.T) {
					cs := &countingStore{withJournal: journal}
					e := newEnv(t, setup{wrap: cs.wrap, groupAge: time.Hour, writeThrough: through})
					o := e.run(tt.code, nil)
					mustStatus(t, o, codemode.StatusCompleted)
					if diff := cmp.Diff(tt.want, e.entries(o.ExecutionID)); diff != "" {
						t.Errorf("log (-want +got):\n%s", diff)
					}
					want := tt.grouped
					switch {
					case through:
						want = tt.through
					case !journal && tt.commitGrouped != 0:
						want = tt.commitGrouped
					}
					if got := cs.commits.Load(); got != want {
						t.Errorf("commits = %d, want %d", got, want)
					}
					if journal && !through {
						if got := cs.journals.Load(); got != tt.journals {
							t.Errorf("journal records = %d, want %d", got, tt.journals)
						}
					}
				})
			}
		}
	}
}

// Write-ahead: when a call that may have a side effect reaches its
// connector, what a crash would leave (the log written, and the store's
// journal) holds it executing, and holds the results of the calls before
// it, with or without a journal, grouped or not.
func TestSideEffectsAreLoggedBeforeTheyAreMade(t *testing.T) {
	for _, journal := range []bool{true, false} {
		for _, through := range []bool{false, true} {
			t.Run(fmt.Sprintf("journal=%v/writeThrough=%v", journal, through), func(t *testing.T) {
				k := newKV("kv")
				cs := &countingStore{withJournal: journal}
				var (
					mu   sync.Mutex
					seen [][]string // what a crash would leave when each add reached the connector
				)
				k.hook = func(ctx context.Context, tool string) error {
					if tool != "add" {
						return nil
					}
					log := renderEntries(cs.durable(t))
					mu.Lock()
					seen = append(seen, log)
					mu.Unlock()
					return nil
				}
				e := newEnv(t, setup{kv: k, wrap: cs.wrap, groupAge: time.Hour, writeThrough: through})
				o := e.run(`async () => {
					await kv.add({ key: "k0", value: "v" });
					await kv.get({ key: "k9" });
					await kv.add({ key: "k1", value: "v" });
					return "ok";
				}`, nil)
				mustStatus(t, o, codemode.StatusCompleted)
				want := [][]string{
					{"1 kv.add executing"},
					{`1 kv.add applied {"key":"k0","previous":null}`, "3 kv.add executing"},
				}
				if !journal || through {
					// The read-only call rode with the second write.
					want[1] = []string{`1 kv.add applied {"key":"k0","previous":null}`, `2 kv.get applied {"key":"k9","value":null}`, "3 kv.add executing"}
				}
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(want, seen); diff != "" {
					t.Errorf("log a crash would leave when each side effect was made (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A group of read-only calls is written before it grows past its bounds:
// its age (checked when an entry is queued), 1,024 entries, or 4 MiB of
// values.
func TestGroupBounds(t *testing.T) {
	big := strings.Repeat("x", 700<<10)
	tests := []struct {
		name     string
		age      time.Duration
		code     string
		calls    int
		midWrite bool // whether a write came before the end of the pass
	}{
		{"young and small", time.Hour, loop("get", 1000), 1000, false},
		{"1024 entries", time.Hour, loop("get", 1030), 1030, true},
		{"4 MiB of values", time.Hour, `async () => { for (let i = 0; i < 7; i++) await kv.get({ key: "k" + i, value: "` + big + `" }); return "ok" }`, 7, true},
		{"old", 20 * time.Millisecond, `async () => {
			await kv.get({ key: "k0" });
			await new Promise(r => setTimeout(r, 40));
			await kv.get({ key: "k1" });
			return "ok";
		}`, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var writes []int // entries inserted by each write
			var mu sync.Mutex
			cs := &countingStore{beforeWrite: func(inserts []codemode.Entry, updates []codemode.EntryUpdate) (bool, error) {
				mu.Lock()
				writes = append(writes, len(inserts))
				mu.Unlock()
				return false, nil
			}}
			e := newEnv(t, setup{wrap: cs.wrap, groupAge: tt.age})
			o := e.run(tt.code, nil)
			mustStatus(t, o, codemode.StatusCompleted)
			if got := len(e.entries(o.ExecutionID)); got != tt.calls {
				t.Errorf("log has %d entries, want %d", got, tt.calls)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := len(writes) > 1; got != tt.midWrite {
				t.Errorf("writes (entries inserted by each) = %v; want a write before the end: %v", writes, tt.midWrite)
			}
		})
	}
}

// Fifty concurrent read-only calls: their entries and results are written
// together at the end of the pass; every entry ends applied with its own
// result. Fifty concurrent side effects are each written before they are
// made, the results with later writes.
func TestPromiseAllDeferredResults(t *testing.T) {
	const n = 50
	tests := []struct {
		method  string
		want    []string
		commits int64
	}{
		{"get", getEntries(n), 3},     // the execution, one write of the whole log, the status
		{"add", addEntries(n), n + 3}, // the execution, one write per call, the last results, the status
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			cs := &countingStore{}
			e := newEnv(t, setup{wrap: cs.wrap, groupAge: time.Hour})
			o := e.run(fmt.Sprintf(`async () => {
				const rs = await Promise.all(Array.from({ length: %d }, (_, i) => kv.%s({ key: "k" + i, value: "v" })));
				return rs.map(r => r.key).join(",");
			}`, n, tt.method), nil)
			mustStatus(t, o, codemode.StatusCompleted)
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("k%d", i)
			}
			if got, want := resultOf[string](t, o), strings.Join(keys, ","); got != want {
				t.Errorf("result = %q, want %q", got, want)
			}
			if diff := cmp.Diff(tt.want, e.entries(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if got := cs.commits.Load(); got != tt.commits {
				t.Errorf("commits = %d, want %d", got, tt.commits)
			}
		})
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
	cs.beforeWrite = func(inserts []codemode.Entry, _ []codemode.EntryUpdate) (bool, error) {
		if hasPending(inserts) {
			// Let the adds return once the pending insert is committed:
			// after this hook, WriteEntries writes it, and the adds'
			// results need p.mu, which the writer holds until then.
			once.Do(func() { close(pending) })
		}
		return false, nil
	}
	cs.beforeStatus = func(x *codemode.Execution) {
		if x.Status != codemode.StatusPaused {
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
	e := newEnv(t, setup{kv: k, wrap: cs.wrap, groupAge: time.Hour})
	o := e.run(pauseAfterAddsCode, nil)
	mustStatus(t, o, codemode.StatusPaused)
	want := append(addEntries(2), getEntry, "4 kv.put pending")
	if diff := cmp.Diff(want, atPause()); diff != "" {
		t.Errorf("log when the run became paused (-want +got):\n%s", diff)
	}
	// The execution, each add before it is made, the pending call with the
	// get queued before it, the adds' results, the status.
	if got := cs.commits.Load(); got != 6 {
		t.Errorf("commits = %d, want 6", got)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
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
	cs.beforeWrite = func(inserts []codemode.Entry, updates []codemode.EntryUpdate) (bool, error) {
		if len(inserts) == 0 && len(updates) > 0 && dropped.CompareAndSwap(false, true) {
			return true, nil // the final write of the first pass is lost
		}
		return onPending(inserts, updates)
	}
	e := newEnv(t, setup{kv: k, wrap: cs.wrap, groupAge: time.Hour})
	o := e.run(pauseAfterAddsCode, nil)
	mustStatus(t, o, codemode.StatusPaused)
	want := []string{"1 kv.add executing", "2 kv.add executing", getEntry, "4 kv.put pending"}
	if diff := cmp.Diff(want, atPause()); diff != "" {
		t.Errorf("log when the run became paused (-want +got):\n%s", diff)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
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

// A failed log write ends the run with an internal failure. Side effects
// (here without a journal), written through: with the final write, the run that completed is error
// and its last call, which ran but whose result was not written, is
// unknown (the run ends as recovery ends it); with the write that
// carries the next call's entry, the next call never runs (and is not
// logged) and the final write records the first result. Side effects,
// grouped: the first call's write-ahead fails, and nothing runs. Read-only
// calls, grouped: the only write, at the end, fails and nothing of the
// pass is logged, though both calls ran.
func TestDeferredWriteFailure(t *testing.T) {
	errDisk := errors.New("disk full")
	tests := []struct {
		name    string
		method  string
		through bool
		// fail reports whether this WriteEntries fails (once).
		fail func(inserts []codemode.Entry, updates []codemode.EntryUpdate) bool
		want []string
		ran  int
	}{
		{"final write", "add", true, func(ins []codemode.Entry, u []codemode.EntryUpdate) bool { return len(ins) == 0 && len(u) > 0 },
			append(addEntries(1), "2 kv.add unknown"), 2},
		{"with an insert", "add", true, func(ins []codemode.Entry, u []codemode.EntryUpdate) bool { return len(ins) > 0 && len(u) > 0 },
			addEntries(1), 1},
		{"write-ahead", "add", false, func(ins []codemode.Entry, u []codemode.EntryUpdate) bool { return len(ins) > 0 },
			[]string{}, 0},
		{"grouped", "get", false, func(ins []codemode.Entry, u []codemode.EntryUpdate) bool { return len(ins) > 0 },
			[]string{}, 2},
	}
	// With the store's journal, a failed journal write is a failed
	// write-ahead: the call is not made.
	t.Run("journal", func(t *testing.T) {
		cs := &countingStore{withJournal: true, beforeJournal: func([]codemode.Entry) error { return errDisk }}
		e := newEnv(t, setup{wrap: cs.wrap, groupAge: time.Hour})
		o, err := e.rt.Execute(e.ctx, loop("add", 2), nil)
		if !errors.Is(err, errDisk) {
			t.Errorf("Execute error = %v, want the journal's failure", err)
		}
		mustStatus(t, o, codemode.StatusError)
		if got := e.entries(o.ExecutionID); len(got) != 0 {
			t.Errorf("log = %q, want nothing", got)
		}
		if got := e.kv.count("add"); got != 0 {
			t.Errorf("add ran %d times, want 0", got)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed atomic.Bool
			cs := &countingStore{beforeWrite: func(ins []codemode.Entry, u []codemode.EntryUpdate) (bool, error) {
				if tt.fail(ins, u) && failed.CompareAndSwap(false, true) {
					return false, errDisk
				}
				return false, nil
			}}
			e := newEnv(t, setup{wrap: cs.wrap, writeThrough: tt.through, groupAge: time.Hour})
			o, err := e.rt.Execute(e.ctx, loop(tt.method, 2), nil)
			if !errors.Is(err, errDisk) {
				t.Errorf("Execute error = %v, want the store's failure", err)
			}
			mustStatus(t, o, codemode.StatusError)
			if !strings.Contains(o.Error, "internal failure") || !strings.Contains(o.Error, "disk full") {
				t.Errorf("outcome error = %q, want an internal failure naming the cause", o.Error)
			}
			if !failed.Load() {
				t.Fatal("the failing write never came")
			}
			if diff := cmp.Diff(tt.want, e.entries(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if got := e.kv.count(tt.method); got != tt.ran {
				t.Errorf("%s ran %d times, want %d", tt.method, got, tt.ran)
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
	mustStatus(t, o, codemode.StatusCompleted)
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
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
