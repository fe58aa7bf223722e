package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors/mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/policy"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

var carol = &codemode.Principal{Subject: "carol", Name: "Carol", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}}

// newPerUserEnv is an env with connector remote: the fixture MCP server
// over streamable HTTP behind the test authorization server, reached
// with each person's own grant (mcp.PerUser), its delete_thing needing
// approval. The authorization server records whose token each call
// carried. With exchange, each person's own token (Principal.Token) is
// traded for the downstream's at the same authorization server (RFC
// 8693), as client "codemode".
func newPerUserEnv(t *testing.T, exchange bool) (*env, *oauthtest.Server) {
	t.Helper()
	target, err := url.Parse(fixture.StartHTTP(t, false))
	if err != nil {
		t.Fatal(err)
	}
	f := oauthtest.New(t)
	f.Next = fixture.Proxy(t, target.String())
	f.PRMResource = f.RS.URL
	if exchange {
		f.ClientID, f.ClientSecret = "codemode", "exchange-secret-5d1c"
	}
	server := f.RS.URL + target.Path
	tokens, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tokens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tokens.Close() })
	seal, err := oauth.NewSealer(bytes.Repeat([]byte{7}, oauth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	p, err := mcp.OpenPerUser(mcp.PerUserConfig{
		Config: mcp.Config{Name: "remote", URL: server, Logger: orDiscard(nil)},
		Session: func(user string) (*oauth.Session, error) {
			cfg := oauth.Config{Connector: "remote", Server: server, Account: user, Store: tokens, Sealer: seal, Logger: orDiscard(nil)}
			if exchange {
				cfg.Grant, cfg.TokenEndpoint, cfg.ClientID, cfg.ClientSecret = oauth.GrantTokenExchange, f.Issuer()+"/token", f.ClientID, f.ClientSecret
			}
			return oauth.New(cfg)
		},
		Store:    tokens,
		Exchange: exchange,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, setup{policy: &policy.Policy{}, extra: []catalog.Source{{Connector: p}}})
	t.Cleanup(func() { p.Close() }) // after the runtime's shutdown (cleanups run last first)
	return e, f
}

// signIn signs who in to remote through the runtime, as the person the
// authorization server issues the tokens to.
func signIn(t *testing.T, e *env, who *codemode.Principal) {
	t.Helper()
	ctx, cancel := fixture.WithDeadline(t, as(who))
	defer cancel()
	a, err := e.rt.BeginSignIn(ctx, "remote")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	browseAs(t, a.URL(), who.Subject)
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// browseAs follows a sign-in URL to its loopback page, signing in at the
// authorization server as subject.
func browseAs(t *testing.T, link, subject string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(link + "&" + oauthtest.SubjectParam + "=" + subject)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in page: %s %s", resp.Status, b)
	}
}

// callers lists whose token each call the downstream received carried.
func callers(f *oauthtest.Server) []string {
	var out []string
	for _, c := range f.Calls() {
		out = append(out, c.Subject)
	}
	return out
}

const deleteThing = `async () => (await remote.delete_thing({ id: "x" })).length`

// Each run's calls carry its starter's own credentials, whoever approves
// it: Bob's approval of Alice's run makes her call with her grant, and
// Alice's of his with his. A person who has not signed in gets a sign-in
// pause in their own run only: another's runs go on, an approver who is
// signed in cannot move it on with his own sign-in, and once Carol signs
// in herself her run resumes, its call carrying her.
func TestPerUserCallsCarryTheRunsStarter(t *testing.T) {
	e, f := newPerUserEnv(t, false)
	signIn(t, e, alice)
	signIn(t, e, bob)

	o, err := e.rt.Execute(as(alice), deleteThing, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	if o, err = e.rt.Approve(as(bob), o.ExecutionID, nil); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	if o, err = e.rt.Execute(as(bob), deleteThing, nil); err != nil {
		t.Fatal(err)
	}
	if o, err = e.rt.Approve(as(alice), o.ExecutionID, nil); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	if got, want := callers(f), []string{"alice", "bob"}; !slices.Equal(got, want) {
		t.Fatalf("the downstream saw calls of %q, want %q", got, want)
	}

	// Carol has not signed in: her run pauses for her sign-in; Alice's
	// runs are not affected.
	echo := `async () => await remote.echo({ message: "hi" })`
	waiting, err := e.rt.Execute(as(carol), echo, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, waiting, codemode.StatusPaused)
	if len(waiting.Pending) != 1 || waiting.Pending[0].Awaits != codemode.AwaitsSignIn {
		t.Fatalf("carol's run is pending %+v, want one call awaiting a sign-in", waiting.Pending)
	}
	if o, err = e.rt.Execute(as(alice), echo, nil); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	if _, err := e.rt.Approve(as(bob), waiting.ExecutionID, nil); !errors.Is(err, codemode.ErrNeedsSignIn) {
		t.Fatalf("bob's approval of carol's run awaiting her sign-in = %v, want ErrNeedsSignIn", err)
	}

	// Bob and Carol sign in in the background at the same time: each
	// gets a sign-in of their own (Bob's link would store his grant as
	// hers), and Bob's resumes nothing of hers.
	bg, err := e.rt.StartSignIn(as(bob), "remote", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := e.rt.StartSignIn(as(carol), "remote", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if bg == cg || bg.URL() == cg.URL() {
		t.Fatal("carol was given bob's sign-in under way")
	}
	browseAs(t, bg.URL(), "bob")
	if err := bg.Err(); err != nil {
		t.Fatal(err)
	}
	if st := e.statusAs(carol, waiting.ExecutionID); st != codemode.StatusPaused {
		t.Fatalf("carol's run is %s after bob's sign-in, want paused", st)
	}
	// Her own sign-in resumes it, her call carrying her.
	browseAs(t, cg.URL(), "carol")
	if err := cg.Err(); err != nil {
		t.Fatal(err)
	}
	if st := e.statusAs(carol, waiting.ExecutionID); st != codemode.StatusCompleted {
		t.Fatalf("carol's run is %s after her sign-in, want completed", st)
	}
	if got, want := callers(f), []string{"alice", "bob", "alice", "carol"}; !slices.Equal(got, want) {
		t.Errorf("the downstream saw calls of %q, want %q", got, want)
	}

	recs, err := e.store.AuditRecords(context.Background(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var signIns []string
	for _, r := range recs {
		if r.Action == codemode.AuditSignIn {
			signIns = append(signIns, r.Person.Subject+" "+r.Target+" "+r.Outcome)
		}
	}
	if want := []string{"alice remote ok", "bob remote ok", "bob remote ok", "carol remote ok"}; !slices.Equal(signIns, want) {
		t.Errorf("sign-ins audited: %q, want %q", signIns, want)
	}
}

// statusAs is the status of run id as who sees it.
func (e *env) statusAs(who *codemode.Principal, id string) codemode.ExecStatus {
	e.t.Helper()
	x, _, err := e.rt.Execution(as(who), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return x.Status
}

// withToken is who with an access token of theirs the test authorization
// server issued (as the team's issuer would).
func withToken(f *oauthtest.Server, who *codemode.Principal) *codemode.Principal {
	p := *who
	p.Token = codemode.Secret(f.IssueOpaque(map[string]any{"sub": who.Subject}))
	return &p
}

// With token exchange nobody signs in to the downstream: a person's own
// request trades their token for the downstream's. Bob's run pauses for
// approval, his token is traded then, and Alice's approval makes the call
// with his downstream token (hers is never given out for it); Dave, whose
// request carries no token, gets a sign-in pause in his run, which he
// resumes himself with a request that does.
func TestPerUserTokenExchange(t *testing.T) {
	e, f := newPerUserEnv(t, true)
	a, b := withToken(f, alice), withToken(f, bob)

	echo := `async () => await remote.echo({ message: "hi" })`
	o, err := e.rt.Execute(as(a), echo, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	o, err = e.rt.Execute(as(b), deleteThing, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	var traded []string
	for _, x := range f.Exchanges() {
		traded = append(traded, x.Get("subject_token"))
	}
	if want := []string{string(a.Token), string(b.Token)}; !slices.Equal(traded, want) {
		t.Fatalf("traded tokens %q, want alice's then bob's (while his run paused)", traded)
	}
	if o, err = e.rt.Approve(as(a), o.ExecutionID, nil); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	if got, want := callers(f), []string{"alice", "bob"}; !slices.Equal(got, want) {
		t.Fatalf("the downstream saw calls of %q, want %q", got, want)
	}

	dave := &codemode.Principal{Subject: "dave", Scopes: []string{codemode.ScopeRun, codemode.ScopeApprove}}
	o, err = e.rt.Execute(as(dave), echo, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	if len(o.Pending) != 1 || o.Pending[0].Awaits != codemode.AwaitsSignIn || !strings.Contains(o.Pending[0].Reason, "dave resumes the run") {
		t.Fatalf("dave's run is pending %+v, want his call awaiting his own token", o.Pending)
	}
	if _, err := e.rt.Approve(as(b), o.ExecutionID, nil); !errors.Is(err, codemode.ErrNeedsSignIn) {
		t.Fatalf("bob's approval of dave's run = %v, want ErrNeedsSignIn (bob's token is not lent)", err)
	}
	if o, err = e.rt.Approve(as(withToken(f, dave)), o.ExecutionID, nil); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	if got, want := callers(f), []string{"alice", "bob", "dave"}; !slices.Equal(got, want) {
		t.Errorf("the downstream saw calls of %q, want %q", got, want)
	}
	if n := len(f.Exchanges()); n != 3 {
		t.Errorf("%d token exchanges, want 3 (alice, bob, dave)", n)
	}
}
