package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/policy"
)

var (
	alice = &codemode.Principal{Subject: "alice", Name: "Alice", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}}
	bob   = &codemode.Principal{Subject: "bob", Name: "Bob", Email: "bob@example.com", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}, Groups: []string{"ops"}}
)

func as(p *codemode.Principal) context.Context {
	return codemode.WithPrincipal(context.Background(), p)
}

const twoPuts = `async () => { await kv.put({ key: "a", value: "1" }); await kv.put({ key: "b", value: "2" }); return "done" }`

// A run keeps its starter through every pass, whoever approves it; each
// approved call names its approver; Alice's run is unknown to Bob for
// everything but deciding its pending actions, and the runtime's
// listings are each person's own.
func TestPeopleOnRunsAndDecisions(t *testing.T) {
	e := newEnv(t, setup{policy: &policy.Policy{Approvers: policy.Approvers{Groups: []string{"ops"}}}})
	o, err := e.rt.Execute(as(alice), twoPuts, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	id := o.ExecutionID
	mine, err := e.rt.Execute(as(bob), `async () => 1`, nil)
	if err != nil {
		t.Fatal(err)
	}

	list, err := e.rt.Executions(as(bob), codemode.ExecutionFilter{})
	if err != nil || len(list) != 1 || list[0].ID != mine.ExecutionID {
		t.Errorf("bob's Executions = %v, %v; want only his run", list, err)
	}
	all, err := e.rt.Executions(context.Background(), codemode.ExecutionFilter{})
	if err != nil || len(all) != 2 {
		t.Errorf("the one user's Executions = %d runs, %v; want both", len(all), err)
	}
	for name, try := range map[string]func() error{
		"Execution":    func() error { _, _, err := e.rt.Execution(as(bob), id); return err },
		"ExecutionLog": func() error { _, _, err := e.rt.ExecutionLog(as(bob), id, codemode.LogQuery{}); return err },
		"Outcome":      func() error { _, err := e.rt.Outcome(as(bob), id); return err },
		"Await": func() error {
			_, err := e.rt.Await(as(bob), id, 0, func(*codemode.Execution) bool { return true })
			return err
		},
		"Rollback":        func() error { _, err := e.rt.Rollback(as(bob), id); return err },
		"Cancel":          func() error { _, err := e.rt.Cancel(as(bob), id, "mine now"); return err },
		"DeleteExecution": func() error { return e.rt.DeleteExecution(as(bob), id) },
	} {
		if err := try(); !errors.Is(err, codemode.ErrUnknownExecution) {
			t.Errorf("bob's %s of alice's run = %v, want ErrUnknownExecution", name, err)
		}
	}
	if out := e.rt.RefusalOutcome(as(bob), id, unknownErr(t, e, id)); out.Status != codemode.StatusError {
		t.Errorf("the refusal's outcome tells bob alice's run is %s", out.Status)
	}

	pending, err := e.rt.Pending(as(bob), "")
	if err != nil || len(pending) != 1 || pending[0].StartedBy != alice.Person() {
		t.Fatalf("bob's Pending = %+v, %v; want alice's action, started by her", pending, err)
	}
	// Bob approves the first call; the run pauses at the second. Alice
	// (not in ops) may not approve it; Bob approves again.
	o, err = e.rt.Approve(as(bob), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	if _, err := e.rt.Approve(as(alice), id, nil); !errors.Is(err, codemode.ErrNotAllowed) || !strings.Contains(err.Error(), "Alice is not an approver of connector kv") {
		t.Errorf("alice's approval = %v, want: Alice is not an approver of connector kv", err)
	}
	o, err = e.rt.Approve(as(bob), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)

	run, log, err := e.rt.Execution(as(alice), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.StartedBy != alice.Person() {
		t.Errorf("after two approvals by bob the run is started by %+v, want alice", run.StartedBy)
	}
	for _, en := range log {
		if en.DecidedBy != bob.Person() || en.DecidedAt.IsZero() {
			t.Errorf("call %d decided by %+v at %v, want bob", en.Seq, en.DecidedBy, en.DecidedAt)
		}
	}
	o, err = e.rt.Rollback(as(alice), id)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusRolledBack)

	recs, err := e.store.AuditRecords(context.Background(), codemode.AuditQuery{ExecutionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Person.Subject+" "+string(r.Action)+" "+strings.SplitN(r.Outcome, ":", 2)[0])
	}
	// Bob's refusals (six views: Execution, ExecutionLog, Outcome, Await,
	// DeleteExecution and unknownErr's Outcome; a rollback; a cancel)
	// come in map order.
	g := strings.Join(got, "|")
	if len(got) != 13 || got[0] != "alice run ok" || strings.Count(g, "bob view refused") != 6 ||
		!strings.Contains(g, "bob rollback refused") || !strings.Contains(g, "bob cancel refused") ||
		!strings.HasSuffix(g, "bob approve ok|alice approve refused|bob approve ok|alice rollback rolled_back") {
		t.Errorf("audit:\n%s", strings.Join(got, "\n"))
	}
}

// unknownErr is the error a missing run gives the one user.
func unknownErr(t *testing.T, e *env, id string) error {
	t.Helper()
	_, err := e.rt.Outcome(as(bob), id)
	return err
}

// Through elicitation, the person whose request runs the pass is asked
// only when the policy lets them approve the call: with separation, not
// Alice about her own run; not a person who is not an approver of the
// connector. When asked, the decision records them.
func TestElicitationFollowsThePolicy(t *testing.T) {
	asked := 0
	accept := approverFunc(func(context.Context, codemode.PendingAction) (codemode.Decision, error) {
		asked++
		return codemode.Accept, nil
	})
	for _, tc := range []struct {
		name string
		p    *policy.Policy
		ask  bool
	}{
		{"separation", &policy.Policy{Separation: true}, false},
		{"not an approver of kv", &policy.Policy{Connectors: map[string]policy.Approvers{"kv": {Subjects: []string{"bob"}}}}, false},
		{"the default", &policy.Policy{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{policy: tc.p})
			asked = 0
			o, err := e.rt.Execute(as(alice), `async () => kv.put({ key: "a", value: "1" })`, accept)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.ask {
				mustStatus(t, o, codemode.StatusPaused)
				if asked != 0 {
					t.Errorf("alice was asked %d times", asked)
				}
				return
			}
			mustStatus(t, o, codemode.StatusCompleted)
			_, log, err := e.rt.Execution(as(alice), o.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if asked != 1 || log[0].DecidedBy != alice.Person() {
				t.Errorf("asked %d times; call decided by %+v, want alice once", asked, log[0].DecidedBy)
			}
		})
	}
}

// The housekeeping prunes audit records older than AuditRetention, and
// only then; the local person (no issuer) is "local".
func TestAuditRetention(t *testing.T) {
	clock := fixture.NewClock()
	e := newEnv(t, setup{clock: clock, hkEvery: -1, auditRetention: 48 * time.Hour})
	run := func() {
		t.Helper()
		if _, err := e.rt.Execute(context.Background(), `async () => 1`, nil); err != nil {
			t.Fatal(err)
		}
	}
	run()
	clock.Advance(24 * time.Hour)
	run()
	clock.Advance(25 * time.Hour) // the first record is 49h old, the second 25h
	run()
	recs, err := e.store.AuditRecords(context.Background(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Person != codemode.Local || !recs[0].At.Equal(clock.Now().Add(-25*time.Hour)) {
		t.Errorf("audit after 49h with a 48h retention: %+v; want the two newer records, by local", recs)
	}
}

// A request about a run (or a connector) that does not exist is audited
// under the id (the name) it named, which is the client's: a long one is
// kept cut, so a client cannot make the audit keep whatever it sends.
func TestAuditKeepsAnUnknownIDCut(t *testing.T) {
	e := newEnv(t, setup{})
	long := "exec_" + strings.Repeat("f", 100_000)
	if _, err := e.rt.Approve(as(bob), long, nil); !errors.Is(err, codemode.ErrUnknownExecution) {
		t.Fatalf("approve of %d bytes of id: %v, want ErrUnknownExecution", len(long), err)
	}
	if _, err := e.rt.Outcome(as(bob), long); !errors.Is(err, codemode.ErrUnknownExecution) {
		t.Fatalf("outcome of %d bytes of id: %v, want ErrUnknownExecution", len(long), err)
	}
	if _, err := e.rt.BeginSignIn(as(bob), long); err == nil {
		t.Fatalf("sign-in to a connector named with %d bytes: no error", len(long))
	}
	recs, err := e.store.AuditRecords(context.Background(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("audit: %d records, want the approval, the view and the sign-in refused", len(recs))
	}
	for _, rec := range recs {
		if len(rec.ExecutionID) > 100 || len(rec.Target) > 1010 || len(rec.Outcome) > 1010 {
			t.Errorf("%s record keeps %d bytes of id, %d of target and %d of outcome, want them cut", rec.Action, len(rec.ExecutionID), len(rec.Target), len(rec.Outcome))
		}
	}
}
