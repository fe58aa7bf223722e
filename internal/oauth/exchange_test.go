package oauth

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
)

// Token exchange (RFC 8693): without a token of the server, a request is
// refused for want of the person's own token; Exchange trades it at the
// token endpoint (the client authenticated, the server's URL as
// resource, the audience and scopes asked for), stores the answer sealed
// as the person's grant (never the person's token), is not repeated
// while that grant is good, and trades again once it is due.
func TestTokenExchange(t *testing.T) {
	f := oauthtest.New(t)
	f.ClientID, f.ClientSecret = "codemode", "xch-secret-41b9"
	f.ExpiresIn = 600
	e := newEnv(t)
	cfg := Config{Account: "alice", Grant: GrantTokenExchange, TokenEndpoint: f.Issuer() + "/token",
		ClientID: f.ClientID, ClientSecret: f.ClientSecret, Audience: "https://api.example", Scopes: []string{"repo"}}
	s := e.session(f, cfg)
	ctx := context.Background()

	_, err := call(t, s, f)
	sr, ok := connectors.AsSignInRequired(err)
	if !ok || !strings.Contains(sr.Reason, "the person's own token is not at hand") || !strings.Contains(sr.Reason, "alice resumes the run") {
		t.Fatalf("a request before any exchange: %v, want a sign-in need naming alice's own token", err)
	}
	if why, err := s.NeedsSignIn(ctx); err != nil || why == nil {
		t.Fatalf("NeedsSignIn before any exchange = %v, %v", why, err)
	}
	if _, err := s.BeginSignIn(ctx); err == nil {
		t.Fatal("BeginSignIn of a token exchange session began")
	}

	mine := f.IssueOpaque(map[string]any{"sub": "alice"})
	if err := s.Exchange(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if status, err := call(t, s, f); status != 200 || err != nil {
		t.Fatalf("a request after the exchange: %d, %v", status, err)
	}
	if err := s.Exchange(ctx, mine); err != nil {
		t.Fatal(err)
	}
	xs := f.Exchanges()
	if len(xs) != 1 {
		t.Fatalf("%d exchanges, want one while the traded token is good", len(xs))
	}
	x := xs[0]
	for k, want := range map[string]string{"subject_token": mine, "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
		"resource": f.ServerURL(), "audience": "https://api.example", "scope": "repo"} {
		if got := x.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := f.Calls(); len(got) != 0 {
		t.Errorf("calls %v reached Next (none was set)", got)
	}

	// The store holds the traded token sealed, and never the person's.
	var raw []byte
	for _, p := range []string{e.path, e.path + "-wal"} {
		b, _ := os.ReadFile(p)
		raw = append(raw, b...)
	}
	if len(raw) == 0 {
		t.Fatal("the store's files are empty")
	}
	if strings.Contains(string(raw), mine) || strings.Contains(string(raw), "access-token") {
		t.Error("the store holds a token in the clear")
	}
	if ok, err := s.Signed(ctx); !ok || err != nil {
		t.Errorf("Signed after the exchange = %v, %v", ok, err)
	}
	// Another person's session does not see alice's grant.
	bob := cfg
	bob.Account = "bob"
	if ok, err := e.session(f, bob).Signed(ctx); ok || err != nil {
		t.Errorf("bob's session is signed in with alice's grant (%v, %v)", ok, err)
	}

	// Due: the next exchange trades again.
	e.clock.Advance(10 * time.Minute)
	if err := s.Exchange(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Exchanges()); n != 2 {
		t.Errorf("%d exchanges, want a second once the traded token was due", n)
	}
	// Due, and no token of the person's at hand (a request on another's
	// behalf): the need says the person's own token is wanted, as before
	// any exchange, not a refresh token the exchange never gives.
	e.clock.Advance(10 * time.Minute)
	_, err = call(t, s, f)
	if sr, ok := connectors.AsSignInRequired(err); !ok || !strings.Contains(sr.Reason, "the person's own token is not at hand") {
		t.Errorf("a request once the traded token is due, without the person's: %v, want a need naming alice's own token", err)
	}
	if why, err := s.NeedsSignIn(ctx); err != nil || why == nil || !strings.Contains(why.Reason, "the person's own token is not at hand") {
		t.Errorf("NeedsSignIn once the traded token is due = %v, %v", why, err)
	}
	if err := s.Exchange(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if status, err := call(t, s, f); status != 200 || err != nil {
		t.Fatalf("a request after trading again: %d, %v", status, err)
	}
	// A token the server does not know is refused with its answer.
	if err := e.session(f, bob).Exchange(ctx, "not-a-token"); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("exchanging an unknown token: %v", err)
	}
	if _, err := New(Config{Server: f.ServerURL(), Grant: GrantTokenExchange, Store: e.store(), Sealer: e.seal}); err == nil {
		t.Error("a token exchange session without a person, client or endpoint was made")
	}
}

// Concurrent calls of one person that each bring their token while the
// session holds none share one exchange: the token endpoint sees one.
func TestConcurrentExchangesShareOne(t *testing.T) {
	f := oauthtest.New(t)
	f.ClientID, f.ClientSecret = "codemode", "xch-secret-41b9"
	e := newEnv(t)
	s := e.session(f, Config{Account: "alice", Grant: GrantTokenExchange, TokenEndpoint: f.Issuer() + "/token",
		ClientID: f.ClientID, ClientSecret: f.ClientSecret})
	mine := f.IssueOpaque(map[string]any{"sub": "alice"})
	const n = 8
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			errs <- s.Exchange(context.Background(), mine)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := len(f.Exchanges()); got != 1 {
		t.Errorf("%d concurrent Exchange calls made %d token exchanges, want 1", n, got)
	}
	if status, err := call(t, s, f); status != 200 || err != nil {
		t.Fatalf("a request after the exchange: %d, %v", status, err)
	}
}

// A server that answers 403 insufficient_scope to a token exchange
// session's token gets no sign-in (there is none to have): the call fails
// with an error that names the scopes it asks for, clipped, and what the
// operator can do; nothing is remembered, so each call sends once and a
// server that stops asking is served at once.
func TestExchangedTokenLacksScope(t *testing.T) {
	f := oauthtest.New(t)
	f.ClientID, f.ClientSecret = "codemode", "xch-secret-41b9"
	long := "scope-" + strings.Repeat("x", 2000)
	f.NeedScopes = []string{"repo", "admin", long}
	e := newEnv(t)
	s := e.session(f, Config{Account: "alice", Grant: GrantTokenExchange, TokenEndpoint: f.Issuer() + "/token",
		ClientID: f.ClientID, ClientSecret: f.ClientSecret, Scopes: []string{"repo"}})
	ctx := context.Background()
	if err := s.Exchange(ctx, f.IssueOpaque(map[string]any{"sub": "alice"})); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		hits := f.Hits()
		_, err := call(t, s, f)
		if _, ok := connectors.AsSignInRequired(err); ok || err == nil {
			t.Fatalf("call %d: %v, want an error that is no sign-in need", i, err)
		}
		for _, want := range []string{"403 insufficient_scope", "repo admin scope-xxx", "credentials.scopes", "the exchange asks for repo)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("call %d: %v\nwant it to say %q", i, err, want)
			}
		}
		if len(err.Error()) > 1000 {
			t.Errorf("call %d: the error is %d bytes: the server's scopes are not clipped", i, len(err.Error()))
		}
		if got := f.Hits() - hits; got != 1 {
			t.Errorf("call %d reached the server %d times, want once", i, got)
		}
		if why, err := s.NeedsSignIn(ctx); why != nil || err != nil {
			t.Errorf("call %d: NeedsSignIn = %v, %v; want none (no sign-in can add scopes)", i, why, err)
		}
	}
	if n := len(f.Exchanges()); n != 1 {
		t.Errorf("%d exchanges, want 1", n)
	}
	f.Set(func(f *oauthtest.Server) { f.NeedScopes = []string{"repo"} })
	if status, err := call(t, s, f); status != 200 || err != nil {
		t.Fatalf("a call once the server asks for no more: %d, %v", status, err)
	}
}

// A traded token that is due for renewal but not expired is used for a
// request made without the person's token (an approval on another's
// request): the README's "missing or expired", not "due". Once expired,
// the request needs the person.
func TestExchangedTokenUsedUntilItExpires(t *testing.T) {
	f := oauthtest.New(t)
	f.ClientID, f.ClientSecret = "codemode", "xch-secret-41b9"
	f.ExpiresIn = 600
	e := newEnv(t)
	s := e.session(f, Config{Account: "alice", Grant: GrantTokenExchange, TokenEndpoint: f.Issuer() + "/token",
		ClientID: f.ClientID, ClientSecret: f.ClientSecret})
	ctx := context.Background()
	if err := s.Exchange(ctx, f.IssueOpaque(map[string]any{"sub": "alice"})); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(9*time.Minute + 30*time.Second) // due (its last minute), not expired
	if why, err := s.NeedsSignIn(ctx); why != nil || err != nil {
		t.Errorf("NeedsSignIn with a token due but not expired = %v, %v; want none", why, err)
	}
	if status, err := call(t, s, f); status != 200 || err != nil {
		t.Fatalf("a request with the traded token due but not expired: %d, %v", status, err)
	}
	e.clock.Advance(time.Minute) // expired
	_, err := call(t, s, f)
	if sr, ok := connectors.AsSignInRequired(err); !ok || !strings.Contains(sr.Reason, "the person's own token is not at hand") {
		t.Errorf("a request once the traded token expired: %v, want a need naming alice's own token", err)
	}
}

// An exchange has a deadline, as a refresh has (leaseTime and the token
// request's timeout): a store that hangs does not hold the exchanges of
// the person's later calls, which share the run, for ever.
func TestExchangeHasADeadline(t *testing.T) {
	f := oauthtest.New(t)
	e := newEnv(t)
	var deadline time.Time
	var hasDeadline bool
	st := getFunc{Store: e.store(), get: func(ctx context.Context, kind, id string) (connectors.Record, error) {
		deadline, hasDeadline = ctx.Deadline()
		return connectors.Record{}, errors.New("the store is down")
	}}
	s := e.session(f, Config{Account: "alice", Grant: GrantTokenExchange, TokenEndpoint: f.Issuer() + "/token",
		ClientID: "codemode", Store: st})
	before := time.Now()
	if err := s.Exchange(context.Background(), "alices-token"); err == nil || !strings.Contains(err.Error(), "the store is down") {
		t.Fatalf("Exchange with a failing store: %v", err)
	}
	if !hasDeadline || deadline.After(time.Now().Add(leaseTime+s.cfg.Timeout)) || deadline.Before(before.Add(leaseTime)) {
		t.Errorf("the exchange's store read had deadline %v (set: %v), want about %v from now", deadline, hasDeadline, leaseTime+s.cfg.Timeout)
	}
}

// getFunc is a Store whose GetRecord is get's.
type getFunc struct {
	Store
	get func(ctx context.Context, kind, id string) (connectors.Record, error)
}

func (g getFunc) GetRecord(ctx context.Context, kind, id string) (connectors.Record, error) {
	return g.get(ctx, kind, id)
}
