package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// sessionFor is the OAuth client of server signing in for user, on a
// handle of its own on the store.
func (ts *tokenStore) sessionFor(server, user string) (*oauth.Session, error) {
	st, err := sqlite.Open(context.Background(), filepath.Clean(ts.path), sqlite.Options{})
	if err != nil {
		return nil, err
	}
	ts.t.Cleanup(func() { st.Close() })
	return oauth.New(oauth.Config{Connector: "remote", Server: server, Account: user, Store: st, Sealer: ts.seal, Logger: testLogger(ts.t)})
}

// openPerUser opens a PerUser connector for the protected server, its
// grants and lister on ts, holding at most limit connections (maxUsers
// when 0); now, if not nil, is its clock.
func openPerUser(t *testing.T, ts *tokenStore, server string, limit int, now func() time.Time) *PerUser {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Clean(ts.path), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if now == nil {
		now = time.Now
	}
	p := newPerUser(PerUserConfig{
		Config:  Config{Name: "remote", URL: server, Logger: testLogger(t)},
		Session: func(user string) (*oauth.Session, error) { return ts.sessionFor(server, user) },
		Store:   st,
	}, cmp.Or(limit, maxUsers), now)
	t.Cleanup(func() { p.Close() })
	return p
}

// as is ctx for a request made for user (as the runtime makes it).
func as(ctx context.Context, user string) context.Context {
	return connectors.WithCallHook(ctx, &connectors.CallHook{User: user})
}

// signInAs signs user in through p, the test authorization server
// issuing their tokens to user.
func signInAs(t *testing.T, p *PerUser, user string) {
	t.Helper()
	ctx, cancel := fixture.WithDeadline(t, as(context.Background(), user))
	defer cancel()
	a, err := p.BeginSignIn(ctx)
	if err != nil {
		t.Fatalf("BeginSignIn(%s): %v", user, err)
	}
	defer a.Close()
	if page := browse(t, a.URL()+"&"+oauthtest.SubjectParam+"="+user); !strings.Contains(page, "Signed in") {
		t.Errorf("page: %s", page)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("Wait(%s): %v", user, err)
	}
}

// echoAs calls the fixture's echo tool for user.
func echoAs(ctx context.Context, p *PerUser, user, msg string) (connectors.Result, error) {
	args, _ := json.Marshal(map[string]string{"message": msg})
	return p.Call(as(ctx, user), "echo", args)
}

// subjects lists whose token each tools/call the server received carried.
func subjects(f *oauthtest.Server) []string {
	var out []string
	for _, c := range f.Calls() {
		out = append(out, c.Subject)
	}
	return out
}

// Each person's calls carry their own grant: before anyone signs in every
// call needs its person's sign-in; once alice has signed in, her calls
// reach the server as hers and bob's still need his own sign-in (her
// grant is never lent); once he has, his reach it as his.
func TestPerUserCallsCarryTheirPerson(t *testing.T) {
	f, server := protected(t, false)
	ts := newTokenStore(t)
	p := openPerUser(t, ts, server, 0, nil)
	ctx := context.Background()

	if _, err := p.Tools(ctx); !needsSignIn(err) {
		t.Fatalf("Tools before any sign-in: %v, want a SignInRequired", err)
	}
	_, err := echoAs(ctx, p, "alice", "before")
	mustNeedSignIn(t, err)

	signInAs(t, p, "alice")
	if r, err := echoAs(ctx, p, "alice", "hi"); err != nil || r.IsError {
		t.Fatalf("alice's call: %+v, %v", r, err)
	}
	_, err = echoAs(ctx, p, "bob", "hi")
	mustNeedSignIn(t, err)
	if sr, err := p.NeedsSignIn(as(ctx, "bob")); sr == nil || err != nil {
		t.Errorf("NeedsSignIn(bob) = %v, %v; want a reason", sr, err)
	}
	if sr, err := p.NeedsSignIn(as(ctx, "alice")); sr != nil || err != nil {
		t.Errorf("NeedsSignIn(alice) = %v, %v; want none", sr, err)
	}

	signInAs(t, p, "bob")
	for _, user := range []string{"bob", "alice", "bob"} {
		if r, err := echoAs(ctx, p, user, "again"); err != nil || r.IsError {
			t.Fatalf("%s's call: %+v, %v", user, r, err)
		}
	}
	if got, want := subjects(f), []string{"alice", "bob", "alice", "bob"}; !slices.Equal(got, want) {
		t.Errorf("the server saw calls of %q, want %q", got, want)
	}
	tools, err := p.Tools(ctx)
	if err != nil || !slices.ContainsFunc(tools, func(tl connectors.Tool) bool { return tl.SourceName == "echo" }) {
		t.Errorf("Tools after the sign-ins: %d tools, %v", len(tools), err)
	}
	if caps := p.Capabilities(); !caps.PerUser || caps.SignIner == nil || caps.Tasker != nil {
		t.Errorf("capabilities %+v: want per user, a sign-in, no tasks", caps)
	}

	// A call that names nobody is refused, not made with anyone's grant.
	if _, err := p.Call(ctx, "echo", json.RawMessage(`{"message":"x"}`)); !errors.Is(err, errNoUser) {
		t.Errorf("a call naming nobody: %v, want errNoUser", err)
	}
	// Signing bob out forgets his grant only.
	if err := p.SignOut(as(ctx, "bob")); err != nil {
		t.Fatal(err)
	}
	_, err = echoAs(ctx, p, "bob", "after")
	mustNeedSignIn(t, err)
	if _, err := echoAs(ctx, p, "alice", "after"); err != nil {
		t.Errorf("alice after bob signed out: %v", err)
	}
}

// A connector opened later (another process, after a restart) lists the
// tools through the grant of whoever listed them last, before anyone
// calls; and each person's grant is theirs in the store.
func TestPerUserListsThroughWhoListedLast(t *testing.T) {
	_, server := protected(t, false)
	ts := newTokenStore(t)
	first := openPerUser(t, ts, server, 0, nil)
	signInAs(t, first, "alice")
	if _, err := first.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Close()

	later := openPerUser(t, ts, server, 0, nil)
	tools, err := later.Tools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools of a new connector: %d tools, %v", len(tools), err)
	}
	if _, err := echoAs(context.Background(), later, "alice", "hi"); err != nil {
		t.Errorf("alice's call on the new connector: %v", err)
	}
	_, err = echoAs(context.Background(), later, "carol", "hi")
	mustNeedSignIn(t, err)
}

// The pool is bounded: past its limit the connection idle longest is
// closed (its person's next call opens another, on their stored grant),
// and connections unused for idleTimeout are closed by the sweep.
func TestPerUserPoolIsBounded(t *testing.T) {
	f, server := protected(t, false)
	ts := newTokenStore(t)
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	advance := func(d time.Duration) {
		mu.Lock()
		clock = clock.Add(d)
		mu.Unlock()
	}
	p := openPerUser(t, ts, server, 1, now)
	signInAs(t, p, "alice")
	advance(time.Second)
	signInAs(t, p, "bob") // alice's connection makes way
	if got := p.users(); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("connections of %q, want bob's only", got)
	}
	advance(time.Second)
	if _, err := echoAs(context.Background(), p, "alice", "back"); err != nil {
		t.Fatalf("alice after her connection was closed: %v", err)
	}
	if got := p.users(); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("connections of %q, want alice's only", got)
	}
	p.sweep()
	if got := p.users(); len(got) != 1 {
		t.Fatalf("a connection used just now was swept: %q", got)
	}
	advance(idleTimeout)
	p.sweep()
	if got := p.users(); len(got) != 0 {
		t.Errorf("idle connections of %q stay open", got)
	}
	if got, want := subjects(f), []string{"alice"}; !slices.Equal(got, want) {
		t.Errorf("the server saw calls of %q, want %q", got, want)
	}
}

// Many people's requests at once on a pool smaller than them: the pool
// never holds more than its limit of connections, each request either reaches
// its person's own connection (here: needs their sign-in) or is told the
// pool is full, and Close ends every connection (goleak, TestMain).
func TestPerUserPoolUnderLoad(t *testing.T) {
	_, server := protected(t, false)
	ts := newTokenStore(t)
	p := openPerUser(t, ts, server, 2, nil)
	users := []string{"ann", "ben", "cat", "dan", "eve"}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := echoAs(context.Background(), p, users[i%len(users)], "x")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !needsSignIn(err) && !strings.Contains(fmt.Sprint(err), "people use it at once") {
			t.Errorf("a request got %v, want its person's sign-in need or the pool's limit", err)
		}
	}
	if n := len(p.users()); n > 2 {
		t.Errorf("%d connections open, past the limit of 2", n)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := echoAs(context.Background(), p, "ann", "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("a request after Close: %v, want ErrClosed", err)
	}
}
