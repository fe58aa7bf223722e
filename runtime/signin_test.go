package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// newRemoteEnv is an env with a fixture.Gated named remote, signed in or
// not when the runtime lists its tools.
func newRemoteEnv(t *testing.T, signedIn bool) (*env, *fixture.Gated) {
	g := fixture.NewGated(t, "remote")
	g.SetSignedIn(signedIn)
	return newEnv(t, setup{extra: []catalog.Source{{Connector: g}}}), g
}

// open opens a sign-in page, as the person's browser does.
func open(t *testing.T, link string) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", link, resp.Status)
	}
}

// mustSignInPending fails unless o is paused on exactly one call awaiting a
// sign-in to remote.
func mustSignInPending(t *testing.T, o codemode.Outcome, method string) codemode.PendingAction {
	t.Helper()
	mustStatus(t, o, codemode.StatusPaused)
	if len(o.Pending) != 1 {
		t.Fatalf("pending = %+v, want one action", o.Pending)
	}
	p := o.Pending[0]
	if p.Awaits != codemode.AwaitsSignIn || p.Connector != "remote" || p.Method != method || !strings.Contains(p.Reason, "not signed in yet") {
		t.Fatalf("pending action = %+v, want remote.%s awaiting a sign-in with its reason", p, method)
	}
	return p
}

// A program's first call to a connector that could not list its tools for
// want of a sign-in pauses the run like an approval; approving it before
// the sign-in is refused and changes nothing; once signed in, approval
// resumes the run by replay: the calls before it are not made again and
// the awaited call is made once.
func TestSignInPausesTheRunAndApprovalResumesIt(t *testing.T) {
	e, r := newRemoteEnv(t, false)
	code := `async () => {
		await kv.add({ key: "a", value: "1" });
		const got = await remote.post({ x: 1 });
		return { got, a: await kv.get({ key: "a" }) };
	}`
	o := e.run(code, nil)
	mustSignInPending(t, o, "post")
	if got := e.log(o.ExecutionID); !slices.Equal(got, []string{"1 kv.add applied", "2 remote.post sign_in"}) {
		t.Fatalf("log = %v", got)
	}

	_, err := e.rt.Approve(e.ctx, o.ExecutionID, nil)
	if !errors.Is(err, codemode.ErrNeedsSignIn) || !codemode.IsRefusal(err) || !strings.Contains(err.Error(), "codemode-mcp login remote") {
		t.Fatalf("approve before the sign-in: %v; want ErrNeedsSignIn saying how to sign in", err)
	}
	if st := e.status(o.ExecutionID); st != codemode.StatusPaused {
		t.Fatalf("after the refused approval the run is %s, want paused", st)
	}

	r.SetSignedIn(true)
	done := e.approve(o.ExecutionID, nil)
	mustStatus(t, done, codemode.StatusCompleted)
	if n := r.Calls("post"); n != 1 {
		t.Fatalf("remote.post made %d times, want 1", n)
	}
	if n := e.kv.count("add"); n != 1 {
		t.Fatalf("kv.add made %d times, want 1 (replayed after the sign-in)", n)
	}
	if got := e.log(o.ExecutionID); !slices.Equal(got, []string{"1 kv.add applied", "2 remote.post applied", "3 kv.get applied"}) {
		t.Fatalf("log = %v", got)
	}
}

// A call awaiting a sign-in to a method that, once the tools are known,
// needs approval, is not approved by the sign-in: the run pauses again for
// its approval.
func TestSignInDoesNotApproveACallThatNeedsApproval(t *testing.T) {
	e, r := newRemoteEnv(t, false)
	o := e.run(`async () => await remote.destroy({ x: 2 })`, nil)
	mustSignInPending(t, o, "destroy")
	r.SetSignedIn(true)
	again := e.approve(o.ExecutionID, nil)
	mustStatus(t, again, codemode.StatusPaused)
	if len(again.Pending) != 1 || again.Pending[0].Awaits != codemode.AwaitsApproval || again.Pending[0].Method != "destroy" {
		t.Fatalf("after the sign-in: pending %+v, want destroy awaiting approval", again.Pending)
	}
	if n := r.Calls("destroy"); n != 0 {
		t.Fatalf("destroy made %d times before its approval", n)
	}
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)
	if n := r.Calls("destroy"); n != 1 {
		t.Fatalf("destroy made %d times, want 1", n)
	}
}

// A server that stops accepting the stored tokens (revoked) makes the next
// call pause the run for a new sign-in instead of failing it: the call,
// refused before it took effect, is made once after the sign-in.
func TestRevokedSignInPausesTheNextCall(t *testing.T) {
	for _, tool := range []string{"post", "read"} { // written ahead, and queued
		t.Run(tool, func(t *testing.T) {
			e, r := newRemoteEnv(t, true)
			first := e.run(`async () => await remote.`+tool+`({ x: 1 })`, nil)
			mustStatus(t, first, codemode.StatusCompleted)

			r.SetSignedIn(false) // revoked
			o := e.run(`async () => { const v = await remote.`+tool+`({ x: 2 }); return v.n; }`, nil)
			mustSignInPending(t, o, tool)
			if got := e.log(o.ExecutionID); !slices.Equal(got, []string{"1 remote." + tool + " sign_in"}) {
				t.Fatalf("log = %v", got)
			}
			r.SetSignedIn(true)
			done := e.approve(o.ExecutionID, nil)
			mustStatus(t, done, codemode.StatusCompleted)
			if n := resultOf[int](t, done); n != 2 || r.Calls(tool) != 2 {
				t.Fatalf("result %d, %d calls in all; want the second call made once", n, r.Calls(tool))
			}
		})
	}
}

// Rejecting a run that awaits a sign-in ends it rejected, and the awaited
// call is rejected in the log.
func TestRejectARunAwaitingASignIn(t *testing.T) {
	e, _ := newRemoteEnv(t, false)
	o := e.run(`async () => await remote.post({})`, nil)
	mustSignInPending(t, o, "post")
	if _, err := e.rt.Reject(e.ctx, o.ExecutionID, 0); err != nil {
		t.Fatal(err)
	}
	if st := e.status(o.ExecutionID); st != codemode.StatusRejected {
		t.Fatalf("status %s, want rejected", st)
	}
	if got := e.log(o.ExecutionID); !slices.Equal(got, []string{"1 remote.post rejected"}) {
		t.Fatalf("log = %v", got)
	}
}

// A program that catches the pause of a call awaiting a sign-in cannot
// make further calls in that pass.
func TestSignInStopsThePass(t *testing.T) {
	e, _ := newRemoteEnv(t, false)
	o := e.run(`async () => {
		try { await remote.post({}); } catch (err) {}
		await kv.add({ key: "b", value: "2" });
		return "went on";
	}`, nil)
	mustSignInPending(t, o, "post")
	if n := e.kv.count("add"); n != 0 {
		t.Fatalf("kv.add made %d times after the pause", n)
	}
}

// BeginSignIn's attempt lists the connector's tools again once signed in,
// so the runs AwaitingSignIn name are approved without a separate refresh.
func TestBeginSignInRelistsTheConnector(t *testing.T) {
	e, _ := newRemoteEnv(t, false)
	if names := toolNames(e.rt, "remote"); len(names) != 0 {
		t.Fatalf("tools before the sign-in: %v", names)
	}
	var ids []string
	for range 2 {
		o := e.run(`async () => (await remote.read({ x: 1 })).tool`, nil)
		mustSignInPending(t, o, "read")
		ids = append(ids, o.ExecutionID)
	}
	mustStatus(t, e.run(`async () => 1`, nil), codemode.StatusCompleted)
	runs, err := e.rt.AwaitingSignIn(e.ctx, "remote")
	var waiting []string
	for _, a := range runs {
		waiting = append(waiting, a.ID)
	}
	if err != nil || !slices.Equal(waiting, ids) {
		t.Fatalf("AwaitingSignIn = %v, %v; want %v", waiting, err, ids)
	}

	a, err := e.rt.BeginSignIn(e.ctx, "remote")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	open(t, a.URL())
	if err := a.Wait(e.ctx); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(e.rt, "remote"); !slices.Contains(names, "read") {
		t.Fatalf("tools after the sign-in: %v", names)
	}
	for _, id := range ids {
		if got := resultOf[string](t, e.approve(id, nil)); got != "read" {
			t.Fatalf("resumed run %s gave %q", id, got)
		}
	}
	if _, err := e.rt.BeginSignIn(e.ctx, "kv"); !errors.Is(err, runtime.ErrNoSignIn) {
		t.Fatalf("BeginSignIn(kv) = %v, want ErrNoSignIn", err)
	}
}

// A sign-in started for a surface that cannot wait (StartSignIn) is waited
// for in the background: a second start while it is under way gets the
// same sign-in, and once the person has signed in every run awaiting it is
// resumed, its call decided by that person, who the audit names.
func TestStartSignInResumesTheWaitingRuns(t *testing.T) {
	e, r := newRemoteEnv(t, false)
	var ids []string
	for range 2 {
		o := e.run(`async () => (await remote.post({ x: 1 })).n`, nil)
		mustSignInPending(t, o, "post")
		ids = append(ids, o.ExecutionID)
	}
	ana := codemode.Person{Subject: codemode.LocalSubject, Name: "ana"}
	b, err := e.rt.StartSignIn(codemode.WithPerson(e.ctx, ana), "remote", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.rt.StartSignIn(e.ctx, "remote", time.Minute)
	if err != nil || again != b || r.Begun() != 1 {
		t.Fatalf("second StartSignIn = %p, %v (%d sign-ins begun); want the first (%p)", again, err, r.Begun(), b)
	}
	open(t, b.URL())
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if st := e.status(id); st != codemode.StatusCompleted {
			t.Fatalf("run %s is %s after the sign-in, want completed", id, st)
		}
	}
	if n := r.Calls("post"); n != 2 {
		t.Fatalf("remote.post made %d times, want once per run", n)
	}
	for _, id := range ids {
		_, log, err := e.rt.Execution(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if log[0].DecidedBy != ana {
			t.Errorf("run %s: the signed-in call was decided by %+v, want ana", id, log[0].DecidedBy)
		}
	}
	recs, err := e.store.AuditRecords(e.ctx, codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var signIns, approvals int
	for _, rec := range recs {
		switch {
		case rec.Action == codemode.AuditSignIn && rec.Person == ana && rec.Target == "remote":
			signIns++
		case rec.Action == codemode.AuditApprove && rec.Person == ana && rec.Outcome == codemode.AuditOK:
			approvals++
		}
	}
	if signIns != 1 || approvals != 2 {
		t.Errorf("audit: %d sign-ins and %d approvals by ana, want 1 and 2: %+v", signIns, approvals, recs)
	}
}

// Closing the runtime ends a sign-in it waits for.
func TestCloseEndsABackgroundSignIn(t *testing.T) {
	e, _ := newRemoteEnv(t, false)
	b, err := e.rt.StartSignIn(e.ctx, "remote", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err after Close = %v, want context.Canceled", err)
	}
}

// Connectors says which connector needs a sign-in.
func TestConnectorsSayWhichNeedsASignIn(t *testing.T) {
	e, g := newRemoteEnv(t, false)
	for _, c := range e.rt.Connectors() {
		if want := c.Name == "remote"; c.NeedsSignIn != want {
			t.Fatalf("%s: NeedsSignIn %v", c.Name, c.NeedsSignIn)
		}
	}
	g.SetSignedIn(true)
	if _, err := e.rt.RefreshConnector(e.ctx, "remote"); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.rt.Connectors() {
		if c.NeedsSignIn {
			t.Fatalf("%s still needs a sign-in after it", c.Name)
		}
	}
}

// A reason that holds a secret is scrubbed, and the call still pauses for
// the sign-in (the scrubbed error must not hide that a sign-in is needed).
func TestSignInWithASecretInItsReason(t *testing.T) {
	for _, signedIn := range []bool{false, true} { // refused at listing, and at the call
		g := fixture.NewGated(t, "remote")
		g.SetSignedIn(signedIn)
		e := newEnv(t, setup{extra: []catalog.Source{{Connector: g}}, scrubber: scrub.New("signed")})
		g.SetSignedIn(false)
		o := e.run(`async () => await remote.post({})`, nil)
		mustStatus(t, o, codemode.StatusPaused)
		if len(o.Pending) != 1 || o.Pending[0].Awaits != codemode.AwaitsSignIn || strings.Contains(o.Pending[0].Reason, "signed") {
			t.Fatalf("signed in at start %v: pending %+v, want a sign-in with its reason scrubbed", signedIn, o.Pending)
		}
		// An approval before the sign-in is refused quoting the reason
		// the connector gives now: scrubbed too, in the error (the
		// console shows it) and in the outcome (the MCP tools and the
		// command line show it).
		_, err := e.rt.Approve(e.ctx, o.ExecutionID, nil)
		if !errors.Is(err, codemode.ErrNeedsSignIn) || strings.Contains(err.Error(), "signed") {
			t.Fatalf("signed in at start %v: approve before the sign-in: %v; want ErrNeedsSignIn, its reason scrubbed", signedIn, err)
		}
		if out := e.rt.RefusalOutcome(e.ctx, o.ExecutionID, err); strings.Contains(out.Error, "signed") || out.Status != codemode.StatusPaused {
			t.Fatalf("signed in at start %v: refusal outcome %+v, want the run paused, its reason scrubbed", signedIn, out)
		}
	}
}

// A run paused both for an approval and for a sign-in (two calls of
// Promise.all: one logged pending while the other awaited the sign-in) is
// not resumed by the sign-in: resuming approves every pending call, and
// nobody approved the other one. It stays paused, for its approval, which
// then resumes it whole.
func TestSignInDoesNotResumeARunAwaitingAnApprovalToo(t *testing.T) {
	g := fixture.NewGated(t, "remote")
	e := newEnv(t, setup{extra: []catalog.Source{{Connector: g}}, kvApprove: []string{"put"}})
	o := e.run(`async () => { await Promise.all([kv.put({ key: "a", value: "1" }), remote.post({ x: 1 })]); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	id := o.ExecutionID
	// One of the two was decided first and stopped the pass; the log gets
	// the other as the race the other way round leaves it.
	other := codemode.Entry{ExecutionID: id, Seq: 2, Kind: codemode.KindCall, Connector: "remote", Method: "post", Args: json.RawMessage(`{"x":1}`),
		State: codemode.EntrySignIn, Error: "connector remote needs a sign-in: not signed in yet"}
	if o.Pending[0].Seq == 2 {
		other = codemode.Entry{ExecutionID: id, Seq: 1, Kind: codemode.KindCall, Connector: "kv", Method: "put", Args: json.RawMessage(`{"key":"a","value":"1"}`), State: codemode.EntryPending}
	}
	other.CreatedAt, other.UpdatedAt = time.Now(), time.Now()
	if err := e.store.WriteEntries(e.ctx, []codemode.Entry{other}, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.log(id); !slices.Equal(got, []string{"1 kv.put pending", "2 remote.post sign_in"}) {
		t.Fatalf("log = %v", got)
	}
	if ids, err := e.rt.AwaitingSignIn(e.ctx, "remote"); err != nil || len(ids) != 0 {
		t.Errorf("AwaitingSignIn = %v, %v; want no run (it awaits an approval too)", ids, err)
	}

	signInThroughTheBrowser(t, e, "remote")
	if n := e.kv.count("put"); n != 0 {
		t.Fatalf("kv.put made %d times after the sign-in; nobody approved it", n)
	}
	if got := e.log(id); !slices.Equal(got, []string{"1 kv.put pending", "2 remote.post sign_in"}) {
		t.Fatalf("log after the sign-in = %v, want it as it was", got)
	}
	mustStatus(t, e.approve(id, nil), codemode.StatusCompleted)
	if e.kv.count("put") != 1 || g.Calls("post") != 1 {
		t.Fatalf("after the approval: kv.put made %d times, remote.post %d; want once each", e.kv.count("put"), g.Calls("post"))
	}
}

// A run AwaitingSignIn listed that moved on before it is resumed (here:
// to a call awaiting approval too) is refused by Resume with the Review
// listed, not approved unseen: the login command resumes the runs it
// listed so.
func TestAwaitingSignInReviewRefusesARunThatMovedOn(t *testing.T) {
	g := fixture.NewGated(t, "remote")
	e := newEnv(t, setup{extra: []catalog.Source{{Connector: g}}, kvApprove: []string{"put"}})
	o := e.run(`async () => { await remote.post({ x: 1 }); return "done" }`, nil)
	mustSignInPending(t, o, "post")
	id := o.ExecutionID
	runs, err := e.rt.AwaitingSignIn(e.ctx, "remote")
	if err != nil || len(runs) != 1 || runs[0].ID != id || runs[0].Review.Digest == "" {
		t.Fatalf("AwaitingSignIn = %+v, %v; want run %s with a digest", runs, err, id)
	}
	moved := codemode.Entry{ExecutionID: id, Seq: 2, Kind: codemode.KindCall, Connector: "kv", Method: "put", Args: json.RawMessage(`{"key":"a","value":"1"}`),
		State: codemode.EntryPending, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := e.store.WriteEntries(e.ctx, []codemode.Entry{moved}, nil); err != nil {
		t.Fatal(err)
	}
	signInThroughTheBrowser(t, e, "remote")
	if _, err := e.rt.Resume(e.ctx, runs[0].ID, runs[0].Review); !errors.Is(err, codemode.ErrNotAsShown) {
		t.Fatalf("Resume with the listed review = %v; want ErrNotAsShown", err)
	}
	if n := e.kv.count("put"); n != 0 {
		t.Fatalf("kv.put made %d times; nobody approved it", n)
	}
	if got := e.log(id); !slices.Equal(got, []string{"1 remote.post sign_in", "2 kv.put pending"}) {
		t.Fatalf("log = %v, want it as it was", got)
	}
}

// signInThroughTheBrowser signs in to connector as a person does: the
// sign-in the runtime starts, its page opened, its end awaited.
func signInThroughTheBrowser(t *testing.T, e *env, connector string) {
	t.Helper()
	b, err := e.rt.StartSignIn(e.ctx, connector, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	open(t, b.URL())
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// A run awaiting a sign-in to a connector the configuration no longer has
// (removed, or renamed) cannot be approved or resumed: replaying it could
// call the wrong tools. It stays paused, is not listed as awaiting a
// sign-in to the new name, and can be rejected.
func TestARunAwaitingASignInToARemovedConnector(t *testing.T) {
	for _, renamed := range []bool{false, true} {
		e, _ := newRemoteEnv(t, false)
		o := e.run(`async () => remote.post({ x: 1 })`, nil)
		mustSignInPending(t, o, "post")
		var s setup
		if renamed {
			s.extra = []catalog.Source{{Connector: fixture.NewGated(t, "remote2")}}
		}
		e.restart(s)
		for _, resume := range []bool{false, true} {
			var err error
			if resume {
				_, err = e.rt.Resume(e.ctx, o.ExecutionID, codemode.Review{})
			} else {
				_, err = e.rt.Approve(e.ctx, o.ExecutionID, nil)
			}
			if !errors.Is(err, codemode.ErrConnectorsChanged) || !strings.Contains(err.Error(), "remote") {
				t.Errorf("renamed %v, resume %v: %v; want ErrConnectorsChanged naming remote", renamed, resume, err)
			}
		}
		if st := e.status(o.ExecutionID); st != codemode.StatusPaused {
			t.Errorf("renamed %v: the run is %s, want still paused", renamed, st)
		}
		if renamed {
			if runs, err := e.rt.AwaitingSignIn(e.ctx, "remote2"); err != nil || len(runs) != 0 {
				t.Errorf("runs awaiting a sign-in to remote2 = %v, %v; want none", runs, err)
			}
		}
		if _, err := e.rt.BeginSignIn(e.ctx, "remote"); err == nil || !strings.Contains(err.Error(), "unknown connector") {
			t.Errorf("renamed %v: sign-in to the removed connector: %v; want unknown connector", renamed, err)
		}
		if _, err := e.rt.Reject(e.ctx, o.ExecutionID, 0); err != nil {
			t.Errorf("renamed %v: reject: %v", renamed, err)
		}
	}
}

// A run awaiting sign-ins to two connectors (two calls of Promise.all)
// resumes once both are made, by the last of them, without an approval:
// it awaits nothing but sign-ins. Before, neither sign-in listed it (each
// took the other's call for something else awaited) and it stayed paused.
func TestARunAwaitingTwoSignInsResumesAfterBoth(t *testing.T) {
	g1, g2 := fixture.NewGated(t, "remote"), fixture.NewGated(t, "remote2")
	e := newEnv(t, setup{extra: []catalog.Source{{Connector: g1}, {Connector: g2}}})
	o := e.run(`async () => { await Promise.all([remote.post({ x: 1 }), remote2.post({ x: 2 })]); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	id := o.ExecutionID
	// One of the two was decided first and stopped the pass; the log gets
	// the other as the race the other way round leaves it.
	entry := func(seq int, connector, args string) codemode.Entry {
		return codemode.Entry{ExecutionID: id, Seq: seq, Kind: codemode.KindCall, Connector: connector, Method: "post", Args: json.RawMessage(args),
			State: codemode.EntrySignIn, Error: "connector " + connector + " needs a sign-in: not signed in yet", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	}
	if len(o.Pending) == 1 {
		other := entry(2, "remote2", `{"x":2}`)
		if o.Pending[0].Seq == 2 {
			other = entry(1, "remote", `{"x":1}`)
		}
		if err := e.store.WriteEntries(e.ctx, []codemode.Entry{other}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.log(id); !slices.Equal(got, []string{"1 remote.post sign_in", "2 remote2.post sign_in"}) {
		t.Fatalf("log = %v", got)
	}
	signInThroughTheBrowser(t, e, "remote")
	if st := e.status(id); st != codemode.StatusPaused {
		t.Fatalf("after one sign-in the run is %s, want paused (it awaits the other)", st)
	}
	signInThroughTheBrowser(t, e, "remote2")
	if st := e.status(id); st != codemode.StatusCompleted {
		t.Fatalf("after both sign-ins the run is %s, want completed", st)
	}
	if g1.Calls("post") != 1 || g2.Calls("post") != 1 {
		t.Errorf("remote.post made %d times, remote2.post %d; want once each", g1.Calls("post"), g2.Calls("post"))
	}
}
