package runtime_test

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

func TestRetentionPrunesTerminalRunsOnly(t *testing.T) {
	e := newEnv(t, setup{maxExecs: 3, hkEvery: -1})
	paused := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
	mustStatus(t, paused, codemode.StatusPaused)
	var done []string
	for range 5 {
		o := e.run(`async () => 1`, nil)
		mustStatus(t, o, codemode.StatusCompleted)
		done = append(done, o.ExecutionID)
	}
	list, err := e.rt.Executions(e.ctx, codemode.ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, x := range list {
		got[x.ID] = true
	}
	// Pruning happens as a run begins: the 3 newest terminal runs before the
	// last one, plus the last one, plus the paused run.
	want := append([]string{paused.ExecutionID}, done[1:]...)
	if len(list) != len(want) {
		t.Errorf("%d executions kept, want %d", len(list), len(want))
	}
	for _, id := range want {
		if !got[id] {
			t.Errorf("%s was pruned", id)
		}
	}
	if got[done[0]] {
		t.Errorf("the oldest completed run %s was kept", done[0])
	}
	// The newest-first order and the status filter come from the store.
	if list[0].ID != done[4] {
		t.Errorf("first listed = %s, want the newest %s", list[0].ID, done[4])
	}
	onlyPaused, err := e.rt.Executions(e.ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused})
	if err != nil || len(onlyPaused) != 1 || onlyPaused[0].ID != paused.ExecutionID {
		t.Errorf("paused filter = %v, %v", onlyPaused, err)
	}
}

func TestPausedRunsExpire(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{ttl: 24 * time.Hour, hkEvery: -1, clock: clk})
	old := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
	mustStatus(t, old, codemode.StatusPaused)
	clk.Advance(24*time.Hour + time.Second)
	fresh := e.run(`async () => { await kv.put({ key: "k2", value: "v" }) }`, nil)
	mustStatus(t, fresh, codemode.StatusPaused)

	x, _, err := e.rt.Execution(e.ctx, old.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusRejected || !strings.Contains(x.Error, "expired after 24h0m0s") {
		t.Errorf("old run: status %s, error %q; want rejected, expired after 24h0m0s", x.Status, x.Error)
	}
	if !x.UpdatedAt.Equal(clk.Now()) {
		t.Errorf("old run updated at %v, want the runtime's clock %v", x.UpdatedAt, clk.Now())
	}
	if got := e.log(old.ExecutionID); len(got) != 1 || got[0] != "1 kv.put rejected" {
		t.Errorf("old run log = %v", got)
	}
	if e.status(fresh.ExecutionID) != codemode.StatusPaused {
		t.Error("the fresh paused run expired")
	}
	if _, err := e.rt.Approve(e.ctx, old.ExecutionID, nil); !errors.Is(err, codemode.ErrWrongState) {
		t.Errorf("approve expired run: err = %v, want ErrWrongState", err)
	}
	if n := e.kv.disposals(old.ExecutionID); n != 1 {
		t.Errorf("expired run disposed %d times, want 1", n)
	}
}

// A paused run past its TTL is refused approval, and expires then, even
// when no new run has done the housekeeping since. Before, it stayed
// approvable until a new run began, however old it was.
func TestApprovalOfAnExpiredRunIsRefused(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{ttl: 24 * time.Hour, hkEvery: time.Hour, clock: clk})
	for _, resume := range []bool{false, true} {
		old := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
		mustStatus(t, old, codemode.StatusPaused)
		clk.Advance(24*time.Hour + time.Second)
		var out codemode.Outcome
		var err error
		if resume {
			out, err = e.rt.Resume(e.ctx, old.ExecutionID, codemode.Review{})
		} else {
			out, err = e.rt.Approve(e.ctx, old.ExecutionID, nil)
		}
		if !errors.Is(err, codemode.ErrWrongState) || !strings.Contains(err.Error(), "expired after 24h0m0s") {
			t.Errorf("resume %v: approving a run past its TTL: %v, want ErrWrongState, expired", resume, err)
		}
		if out.Status != codemode.StatusRejected {
			t.Errorf("resume %v: outcome %s, want rejected", resume, out.Status)
		}
		if got := e.log(old.ExecutionID); len(got) != 1 || got[0] != "1 kv.put rejected" {
			t.Errorf("resume %v: log = %v, want the call rejected", resume, got)
		}
		if v, ok := e.kv.get("k"); ok {
			t.Errorf("resume %v: the expired run's call was made (k = %q)", resume, v)
		}
	}
}

// An approval refused once the run was claimed (its pending actions
// changed since they were shown) gives the run back as it was: paused
// since it paused, so it expires when it would have. Before, the refusal
// stamped the run anew, and every refused approval put off its expiry.
func TestARefusedApprovalDoesNotPutOffTheExpiry(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{ttl: 24 * time.Hour, hkEvery: -1, clock: clk})
	old := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
	mustStatus(t, old, codemode.StatusPaused)
	clk.Advance(12 * time.Hour)
	if _, err := e.rt.Resume(e.ctx, old.ExecutionID, codemode.Review{Digest: "not what is pending"}); !errors.Is(err, codemode.ErrNotAsShown) {
		t.Fatalf("Resume with another digest: %v, want ErrNotAsShown", err)
	}
	clk.Advance(12*time.Hour + time.Second)
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted) // the housekeeping runs
	if st := e.status(old.ExecutionID); st != codemode.StatusRejected {
		t.Errorf("24 h after it paused the run is %s, want rejected (expired)", st)
	}
}

// Housekeeping is throttled: the first Execute prunes, later ones only
// once MaxExecutions runs have begun since (or the interval passed, see
// TestHousekeepingInterval).
func TestHousekeepingThrottledByCount(t *testing.T) {
	tests := []struct {
		name    string
		hkEvery time.Duration
		runs    int
		want    int // executions kept after the last run (MaxExecutions 2)
	}{
		{"every run, 5", -1, 5, 3},
		{"every run, 6", -1, 6, 3},
		// Run 1 prunes; runs 2-3 do not; run 4 (3 since) prunes to 2 and
		// adds itself; runs 5-6 do not; run 7 prunes again.
		{"throttled, 4", time.Hour, 4, 3},
		{"throttled, 5", time.Hour, 5, 4},
		{"throttled, 6", time.Hour, 6, 5},
		{"throttled, 7", time.Hour, 7, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{maxExecs: 2, hkEvery: tc.hkEvery})
			for range tc.runs {
				mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
			}
			list, err := e.rt.Executions(e.ctx, codemode.ExecutionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != tc.want {
				t.Errorf("%d executions kept, want %d", len(list), tc.want)
			}
		})
	}
}

// Expiry waits for the housekeeping interval, then happens on the next
// Execute.
func TestHousekeepingInterval(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{ttl: time.Minute, hkEvery: time.Hour, clock: clk})
	put := `async () => { await kv.put({ key: "k", value: "v" }) }`
	old := e.run(put, nil) // the first Execute does the housekeeping
	mustStatus(t, old, codemode.StatusPaused)
	clk.Advance(2 * time.Minute) // past the TTL, within the interval
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
	if got := e.status(old.ExecutionID); got != codemode.StatusPaused {
		t.Fatalf("within the interval: old run is %s, want still paused", got)
	}
	clk.Advance(time.Hour)
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
	if got := e.status(old.ExecutionID); got != codemode.StatusRejected {
		t.Errorf("after the interval: old run is %s, want rejected (expired)", got)
	}
}

// Dispose runs once per terminal transition, never on pause.
func TestDisposal(t *testing.T) {
	e := newEnv(t, setup{})
	put := `async () => { await kv.put({ key: "k", value: "v" }); return 1 }`
	tests := []struct {
		name  string
		drive func(t *testing.T) string
		want  int
	}{
		{"completed", func(t *testing.T) string { return e.run(`async () => 1`, nil).ExecutionID }, 1},
		{"error", func(t *testing.T) string { return e.run(`async () => { throw new Error("x") }`, nil).ExecutionID }, 1},
		{"paused", func(t *testing.T) string { return e.run(put, nil).ExecutionID }, 0},
		{"paused then approved", func(t *testing.T) string {
			id := e.run(put, nil).ExecutionID
			mustStatus(t, e.approve(id, nil), codemode.StatusCompleted)
			return id
		}, 1},
		{"paused then rejected", func(t *testing.T) string {
			id := e.run(put, nil).ExecutionID
			if _, err := e.rt.Reject(e.ctx, id, 0); err != nil {
				t.Fatal(err)
			}
			return id
		}, 1},
		{"completed then rolled back", func(t *testing.T) string {
			id := e.run(`async () => kv.add({ key: "z" })`, nil).ExecutionID
			if _, err := e.rt.Rollback(e.ctx, id); err != nil {
				t.Fatal(err)
			}
			return id
		}, 2},
		{"paused then deleted", func(t *testing.T) string {
			id := e.run(put, nil).ExecutionID
			if err := e.rt.DeleteExecution(e.ctx, id); err != nil {
				t.Fatal(err)
			}
			return id
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.drive(t)
			if got := e.kv.disposals(id); got != tc.want {
				t.Errorf("disposed %d times, want %d", got, tc.want)
			}
		})
	}
}

func TestDeleteExecution(t *testing.T) {
	e := newEnv(t, setup{})
	done := e.run(`async () => kv.add({ key: "a" })`, nil)
	if err := e.rt.DeleteExecution(e.ctx, done.ExecutionID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.rt.Execution(e.ctx, done.ExecutionID); !errors.Is(err, codemode.ErrUnknownExecution) {
		t.Errorf("after delete: err = %v, want ErrUnknownExecution", err)
	}
	if _, ok := e.kv.get("a"); !ok {
		t.Error("deleting an execution reverted its effects")
	}
}

// The housekeeping an Execute does reads of the paused runs what their
// expiry needs, and an expiring run whole: 10 paused runs that each
// printed 512 kB (5 MB) make an Execute that does it allocate far less
// than that. A run that expires keeps its console output.
func TestHousekeepingReadsNotThePausedRunsOutput(t *testing.T) {
	clk := fixture.NewClock()
	e := newEnv(t, setup{ttl: 24 * time.Hour, hkEvery: -1, clock: clk})
	old := e.run(`async () => { console.log("kept"); await kv.put({ key: "old", value: "v" }) }`, nil)
	mustStatus(t, old, codemode.StatusPaused)
	const runs, size = 10, 512 << 10
	for i := range runs {
		o := e.run(fmt.Sprintf(`async () => { console.log("o".repeat(%d)); await kv.put({ key: "k%d", value: "v" }) }`, size-8, i), nil)
		mustStatus(t, o, codemode.StatusPaused)
	}
	e.run(`async () => 1`, nil)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
	goruntime.ReadMemStats(&m1)
	if n := m1.TotalAlloc - m0.TotalAlloc; n > runs*size/10 {
		t.Errorf("an Execute that did the housekeeping among %d paused runs that printed %d bytes each allocated %d bytes, want at most %d", runs, size, n, runs*size/10)
	}
	clk.Advance(24*time.Hour + time.Second)
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
	x, _, err := e.rt.Execution(e.ctx, old.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != codemode.StatusRejected || len(x.Logs) != 1 || x.Logs[0] != "kept" {
		t.Errorf("the expired run: status %s, logs %q; want rejected, its output kept", x.Status, x.Logs)
	}
}
