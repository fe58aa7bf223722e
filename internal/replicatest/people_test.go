package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/postgres"
)

// faultDuration is how long TestFaultsUnderLoadWithPeople kills a
// replica: 20 s in the short form CI runs, two minutes (the acceptance of
// a server for a team) with REPLICATEST_FAULT_DURATION=2m.
func faultDuration(t *testing.T) time.Duration {
	v := os.Getenv("REPLICATEST_FAULT_DURATION")
	if v == "" {
		return 20 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("REPLICATEST_FAULT_DURATION=%q: want a positive duration such as 2m", v)
	}
	return d
}

// Faults under load, with people: two replicas behind one issuer, twenty
// clients signed in as five people run programs whose side effects wait
// for an approval, two clients of bob (the one approver; separation on)
// race to approve them through both replicas, and replica B is killed
// with SIGKILL and restarted on the same address every 5 s. Then: every
// side effect that happened has exactly one log entry, applied or
// unknown, and happened once (no approval applied twice); a run has at
// most one unknown entry; no run stays claimed past the lease after the
// last kill; each run is its starter's, and no person was ever shown
// another's run.
func TestFaultsUnderLoadWithPeople(t *testing.T) {
	duration := faultDuration(t)
	as := oauthtest.New(t)
	const resource = "https://codemode.test/mcp"
	token := func(sub string, scopes ...string) string {
		return as.SignJWT("RS256", map[string]any{"aud": resource, "sub": sub, "name": strings.ToUpper(sub[:1]) + sub[1:], "scope": strings.Join(scopes, " "), "exp": time.Now().Add(time.Hour).Unix()})
	}
	url := pgtest.NewDatabase(t)
	tm := newTeamOn(t, url, teamConfig{
		server:    fmt.Sprintf("  auth:\n    issuer: %s\n    resource: %s\n", as.Issuer(), resource),
		approvals: "  separation: true\n  approvers:\n    subjects: [bob]\n",
		token:     token("ops", codemode.ScopeRun, codemode.ScopeApprove, codemode.ScopeAdmin),
	})
	a := tm.start("A")
	b := tm.start("B")
	addrs := []string{a.addr, b.addr}

	var (
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		mu        sync.Mutex
		starterOf = map[string]string{} // run id → who was told it started it
		started   atomic.Int64          // codemode calls answered with a run
		failed    atomic.Int64          // codemode calls that failed (a replica was down)
		views     atomic.Int64          // codemode_executions answers checked
		approved  atomic.Int64          // approvals that ran the run on
		lost      atomic.Int64          // approvals refused (another won the race) or cut
	)
	pace := func() bool { // false once stopped
		select {
		case <-stop:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}
	// session keeps a client of one replica for one person, connecting
	// again after the replica was killed.
	type session struct {
		addr, token string
		c           *client.Client
	}
	callAs := func(s *session, tool string, args map[string]any) (map[string]any, bool, error) {
		if s.c == nil {
			c, err := connect(s.addr, s.token)
			if err != nil {
				return nil, false, err
			}
			s.c = c
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, isErr, err := callOn(ctx, s.c, tool, args)
		if err != nil {
			s.c.Close()
			s.c = nil
		}
		return out, isErr, err
	}

	people := []string{"ana", "ben", "cy", "dee", "eve"}
	const clients = 20
	for i := range clients {
		who := people[i%len(people)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &session{addr: addrs[i%2], token: token(who, codemode.ScopeRun)}
			defer func() {
				if s.c != nil {
					s.c.Close()
				}
			}()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if n%5 == 4 { // what does this person see?
					out, _, err := callAs(s, "codemode_executions", map[string]any{})
					if err == nil {
						views.Add(1)
						runs, _ := out["executions"].([]any)
						for _, r := range runs {
							by, _ := r.(map[string]any)["startedBy"].(map[string]any)
							if by["subject"] != who {
								t.Errorf("%s was shown run %v, started by %v", who, r.(map[string]any)["executionId"], by)
							}
						}
					}
					continue
				}
				name := fmt.Sprintf("%s%d.%d", who, i, n)
				code := fmt.Sprintf(`async () => { await fx.counter({ name: %q }); await fx.delete_thing({ id: %q }); await fx.counter({ name: %q }); return "done"; }`, name+"a", name, name+"b")
				out, _, err := callAs(s, "codemode", map[string]any{"code": code})
				if id, _ := out["executionId"].(string); err == nil && id != "" {
					started.Add(1)
					mu.Lock()
					starterOf[id] = who
					mu.Unlock()
					continue
				}
				failed.Add(1)
				if !pace() {
					return
				}
			}
		}()
	}
	for i := range 2 { // bob, through each replica
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &session{addr: addrs[i], token: token("bob", codemode.ScopeRun, codemode.ScopeApprove)}
			defer func() {
				if s.c != nil {
					s.c.Close()
				}
			}()
			for {
				out, _, err := callAs(s, "codemode_pending", map[string]any{})
				list, _ := out["pending"].([]any)
				if err == nil {
					ids := map[string]bool{}
					for _, p := range list {
						ids[p.(map[string]any)["executionId"].(string)] = true
					}
					for id := range ids {
						res, isErr, err := callAs(s, "codemode_approve", map[string]any{"executionId": id})
						if err == nil && !isErr && res["status"] != "error" {
							approved.Add(1)
						} else {
							lost.Add(1)
						}
					}
				}
				if len(list) == 0 && !pace() {
					return
				}
			}
		}()
	}

	ctx := context.Background()
	st, err := postgres.Open(ctx, url, postgres.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	claimed := func() map[string]*codemode.Execution {
		out := map[string]*codemode.Execution{}
		for _, status := range []codemode.ExecStatus{codemode.StatusRunning, codemode.StatusRollingBack} {
			runs, err := st.ListExecutions(ctx, codemode.ExecutionFilter{Status: status})
			if err != nil {
				t.Error(err)
				return nil
			}
			for _, e := range runs {
				out[e.ID] = e
			}
		}
		return out
	}
	// released follows the runs claimed when B was killed (B's, now
	// nobody's, and A's in flight) until none is claimed any more, and
	// records how long that took.
	var (
		watchers sync.WaitGroup
		slowest  atomic.Int64
	)
	released := func(killed time.Time, runs map[string]*codemode.Execution) {
		defer watchers.Done()
		for len(runs) > 0 {
			now := claimed()
			if now == nil {
				return
			}
			for id := range runs {
				if _, still := now[id]; !still {
					delete(runs, id)
				}
			}
			if time.Since(killed) > 2*lease {
				for _, e := range runs {
					log, _ := st.Entries(ctx, e.ID)
					t.Errorf("run %s is still claimed (owner %s) %v after B was killed; its log: %s", e.ID, e.Owner, time.Since(killed).Round(time.Millisecond), describeLog(log))
				}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		if took := int64(time.Since(killed)); took > slowest.Load() {
			slowest.Store(took) // one watcher at a time in practice: kills are 5 s apart
		}
	}

	// Kill B every 5 s, and bring it back on its address.
	kills := 0
	end := time.Now().Add(duration)
	for time.Now().Before(end) {
		time.Sleep(5 * time.Second)
		b.kill()
		killed := time.Now()
		kills++
		watchers.Add(1)
		go released(killed, claimed())
		b = tm.startOn("B", b.addr)
	}
	close(stop)
	wg.Wait()
	watchers.Wait()
	t.Logf("%v with %d kills of B: %d runs started by 5 people through 20 clients, %d codemode calls failed (B down), %d approvals ran a run on, %d lost a race or were cut, %d lists of runs checked; the runs claimed at a kill were all released within %v (lease %v)",
		duration, kills, started.Load(), failed.Load(), approved.Load(), lost.Load(), views.Load(), time.Duration(slowest.Load()).Round(time.Millisecond), lease)
	if left := claimed(); len(left) > 0 {
		for _, e := range left {
			log, _ := st.Entries(ctx, e.ID)
			t.Errorf("run %s is still claimed (owner %s) once the load has stopped; its log: %s", e.ID, e.Owner, describeLog(log))
		}
	}

	// Every run is its starter's; every side effect has one entry,
	// applied or unknown, and happened once; a run has at most one
	// unknown entry; each approval that ran is recorded once.
	runs, err := st.ListExecutions(ctx, codemode.ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]codemode.EntryState{}
	statuses := map[string]int{}
	unknowns := 0
	for _, e := range runs {
		statuses[e.Status.String()]++
		if who, ok := starterOf[e.ID]; ok && e.StartedBy.Subject != who {
			t.Errorf("run %s was started by %s, yet records %q", e.ID, who, e.StartedBy.Subject)
		}
		log, err := st.Entries(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		unknownHere := 0
		for _, en := range log {
			if en.State == codemode.EntryUnknown {
				unknownHere++
			}
			if en.Method == "delete_thing" && en.State == codemode.EntryApplied && en.DecidedBy.Subject != "bob" {
				t.Errorf("run %s: its approved call was decided by %v, want bob", e.ID, en.DecidedBy)
			}
			if en.Method != "counter" {
				continue
			}
			var args struct{ Name string }
			if err := json.Unmarshal(en.Args, &args); err != nil {
				t.Fatal(err)
			}
			if _, twice := logged[args.Name]; twice {
				t.Errorf("the side effect %s has two entries", args.Name)
			}
			logged[args.Name] = en.State
		}
		unknowns += unknownHere
		if unknownHere > 1 {
			t.Errorf("run %s has %d unknown entries, want at most one: %s", e.ID, unknownHere, describeLog(log))
		}
	}
	recs, err := st.AuditRecords(ctx, codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	approvals := map[string]int{}
	for _, r := range recs {
		if r.Action == codemode.AuditApprove && r.Outcome == "ok" {
			approvals[r.ExecutionID+" "+r.Target]++
		}
	}
	for k, n := range approvals {
		if n > 1 {
			t.Errorf("the approval of %s was applied %d times", k, n)
		}
	}
	effects := tm.effects()
	var twice []string
	for name, n := range effects {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s (%d times)", name, n))
		}
	}
	sort.Strings(twice)
	t.Logf("%d runs by status %v; %d side effects, %d unknown entries, %d approvals recorded", len(runs), statuses, len(effects), unknowns, len(approvals))
	everyEffectLogged(t, effects, logged)
	if len(twice) > 0 {
		t.Errorf("%d side effects happened more than once: %s", len(twice), strings.Join(twice, ", "))
	}
	if approved.Load() == 0 || kills == 0 || statuses["completed"] == 0 {
		t.Errorf("the load did not do what it is for: %d approvals ran, %d kills, runs by status %v", approved.Load(), kills, statuses)
	}
}
