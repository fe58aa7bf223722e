package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/postgres"
)

// The database crashes (PostgreSQL stopped in immediate mode: its
// processes exit at once and every connection is cut, as when its server
// is killed) and comes back, three times, while twenty clients run
// programs with side effects through two replicas. Within the lease after
// it is back for the last time no run is left claimed — each has ended or
// paused — and every side effect that happened downstream has its entry,
// settled, in its run's log: applied, or unknown where the run was ended
// while the call was in flight.
func TestDatabaseCrashes(t *testing.T) {
	pg := pgtest.Private(t)
	ctx := context.Background()
	url, err := pg.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeamOn(t, url, teamConfig{})
	replicas := []*replica{tm.start("A"), tm.start("B")}

	const clients = 20
	var (
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		calls   atomic.Int64
		refused atomic.Int64 // calls that failed (the database was down)
	)
	for i := range clients {
		r := replicas[i%len(replicas)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("c%d.%d", i, n)
				code := fmt.Sprintf(`async () => { await fx.counter({ name: %q }); await fx.echo({ message: "between" }); await fx.counter({ name: %q }); return "done"; }`, name+"a", name+"b")
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				out, isErr, err := r.callRaw(cctx, "codemode", map[string]any{"code": code})
				cancel()
				calls.Add(1)
				if err != nil || isErr || out["status"] != "completed" {
					refused.Add(1)
					// Pace a client whose calls fail at once while the
					// database is down, so that it does not spin.
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	stopClients := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer stopClients()

	// Each crash comes while the clients' programs are making side
	// effects: after 40 more since the database was last back.
	var back time.Time
	for round := range 3 {
		seen := len(tm.effects())
		end, cancel := fixture.WithDeadline(t, context.Background())
		for len(tm.effects()) < seen+40 {
			if end.Err() != nil {
				t.Fatalf("round %d: %d side effects by the test's deadline, want 40\nA's stderr:\n%s\nB's stderr:\n%s", round, len(tm.effects())-seen, replicas[0].stderr, replicas[1].stderr)
			}
			time.Sleep(20 * time.Millisecond) // a poll of the fixture's file
		}
		cancel()
		if err := pg.Crash(); err != nil {
			t.Fatalf("round %d: crash the database: %v", round, err)
		}
		time.Sleep(300 * time.Millisecond) // down a while: passes in flight find it gone
		if err := pg.Restart(); err != nil {
			t.Fatalf("round %d: restart the database: %v", round, err)
		}
		back = time.Now()
	}
	stopClients()
	t.Logf("%d calls of codemode, %d of them not completed; %d side effects", calls.Load(), refused.Load(), len(tm.effects()))

	st, err := postgres.Open(ctx, url, postgres.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	claimed := func() []*codemode.Execution {
		var out []*codemode.Execution
		for _, status := range []codemode.ExecStatus{codemode.StatusRunning, codemode.StatusRollingBack} {
			runs, err := st.ListExecutions(ctx, codemode.ExecutionFilter{Status: status})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, runs...)
		}
		return out
	}
	for {
		left := claimed()
		if len(left) == 0 {
			took := time.Since(back)
			t.Logf("no run claimed %v after the database came back (lease %v)", took.Round(time.Millisecond), lease)
			if took > lease {
				t.Errorf("runs stayed claimed for %v after the database came back, more than the lease %v", took, lease)
			}
			break
		}
		if time.Since(back) > 3*lease {
			for _, e := range left {
				log, _ := st.Entries(ctx, e.ID)
				t.Errorf("run %s is still %s (owner %s) %v after the database came back; its log: %s", e.ID, e.Status, e.Owner, time.Since(back).Round(time.Millisecond), describeLog(log))
			}
			t.Fatalf("A's stderr:\n%s\nB's stderr:\n%s", tail(replicas[0].stderr.String()), tail(replicas[1].stderr.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Every side effect has its entry, settled; no run left an entry
	// undecided.
	runs, err := st.ListExecutions(ctx, codemode.ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]codemode.EntryState{}
	statuses := map[string]int{}
	for _, e := range runs {
		statuses[e.Status.String()]++
		log, err := st.Entries(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range log {
			if en.State == codemode.EntryExecuting || en.State == codemode.EntryPending {
				t.Errorf("run %s is %s, yet its call %d (%s.%s) is %s", e.ID, e.Status, en.Seq, en.Connector, en.Method, en.State)
			}
			if en.Method != "counter" {
				continue
			}
			var args struct{ Name string }
			if err := json.Unmarshal(en.Args, &args); err != nil {
				t.Fatal(err)
			}
			logged[args.Name] = en.State
		}
	}
	t.Logf("runs by status: %v", statuses)
	if statuses["error"] == 0 {
		t.Errorf("no run ended in error: the crashes interrupted nothing (runs by status: %v)", statuses)
	}
	everyEffectLogged(t, tm.effects(), logged)
}

// everyEffectLogged checks that each side effect that happened (effects,
// by name) has its entry in logged, applied or unknown.
func everyEffectLogged(t *testing.T, effects map[string]int, logged map[string]codemode.EntryState) {
	t.Helper()
	var missing, unsettled []string
	for name := range effects {
		switch st, ok := logged[name]; {
		case !ok:
			missing = append(missing, name)
		case st != codemode.EntryApplied && st != codemode.EntryUnknown:
			unsettled = append(unsettled, name+" ("+st.String()+")")
		}
	}
	sort.Strings(missing)
	sort.Strings(unsettled)
	if len(missing) > 0 {
		t.Errorf("%d side effects happened but are in no run's log: %s", len(missing), strings.Join(missing, ", "))
	}
	if len(unsettled) > 0 {
		t.Errorf("%d side effects are logged neither applied nor unknown: %s", len(unsettled), strings.Join(unsettled, ", "))
	}
}

// describeLog is a log in one line: each entry's seq, method and state.
func describeLog(log []codemode.Entry) string {
	var b strings.Builder
	for i, en := range log {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d %s.%s %s", en.Seq, en.Connector, en.Method, en.State)
	}
	return b.String()
}

// tail is the last 4 KB of s.
func tail(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return s
}
