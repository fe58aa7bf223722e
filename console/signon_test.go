package console_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/console"
)

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeSignOn is an issuer's sign-on as the console sees it: its
// authorization URL names the state, and its SignIn gives the person
// signIn returns (nil: alice, with codemode:run, for an hour) once the
// nonce and verifier are the ones the attempt sent.
type fakeSignOn struct {
	clock *clock

	mu     sync.Mutex
	sent   map[string][2]string                           // state -> nonce, verifier; guarded by mu
	signIn func() (*codemode.Principal, time.Time, error) // guarded by mu
}

// answer makes SignIn answer with err from now on.
func (f *fakeSignOn) answer(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signIn = func() (*codemode.Principal, time.Time, error) { return nil, time.Time{}, err }
}

func (f *fakeSignOn) AuthorizationURL(_ context.Context, state, nonce, verifier string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent[state] = [2]string{nonce, verifier}
	return "https://issuer.example/authorize?" + url.Values{"state": {state}}.Encode(), nil
}

func (f *fakeSignOn) SignIn(_ context.Context, q url.Values, nonce, verifier string) (*codemode.Principal, time.Time, error) {
	f.mu.Lock()
	sent, ok := f.sent[q.Get("state")]
	f.mu.Unlock()
	if !ok || sent != [2]string{nonce, verifier} {
		return nil, time.Time{}, errors.New("the attempt's nonce and verifier are not the ones sent")
	}
	f.mu.Lock()
	signIn := f.signIn
	f.mu.Unlock()
	if signIn != nil {
		return signIn()
	}
	return &codemode.Principal{Subject: "alice", Name: "Alice", Scopes: []string{codemode.ScopeRun}}, f.clock.Now().Add(time.Hour), nil
}

func newSignOnEnv(t *testing.T) (*env, *fakeSignOn, *clock) {
	t.Helper()
	c := &clock{now: time.Now()}
	so := &fakeSignOn{sent: map[string][2]string{}, clock: c}
	e := newEnvOf(t, console.Options{}, func(cons *console.Console) {
		console.SetClock(cons, c.Now)
		cons.SignInThrough(so, "https://issuer.example/")
	})
	return e, so, c
}

// start begins a sign-in and returns the state the issuer was sent.
func (b *browser) start(next string) string {
	b.t.Helper()
	p := b.get("/auth/login?next=" + url.QueryEscape(next))
	loc, err := url.Parse(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || err != nil || loc.Host != "issuer.example" {
		b.t.Fatalf("starting a sign-in: %d to %q", p.status, p.header.Get("Location"))
	}
	return loc.Query().Get("state")
}

// A session made by a sign-in through the issuer lasts until the sign-in
// does (the access token's expiry), then the console asks for a sign-in
// again; logging out ends it at once. The nonce and verifier the console
// completes an attempt with are those it sent for its state.
func TestSessionLastsAsTheSignIn(t *testing.T) {
	e, _, c := newSignOnEnv(t)
	b := e.browser()
	state := b.start("/runs")
	if p := b.get("/auth/callback?state=" + url.QueryEscape(state) + "&code=c0de"); p.status != http.StatusOK || !strings.Contains(p.body, `content="0; url=/runs"`) {
		t.Fatalf("the redirect back: %d\n%s", p.status, p.body)
	}
	if p := b.get("/runs"); p.status != http.StatusOK || !strings.Contains(p.body, "Signed in as Alice") {
		t.Fatalf("after signing in: %d\n%s", p.status, p.body)
	}
	c.advance(59 * time.Minute)
	if p := b.get("/runs"); p.status != http.StatusOK {
		t.Fatalf("within the sign-in's hour: %d", p.status)
	}
	c.advance(2 * time.Minute)
	if p := b.get("/runs"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Sign in with your team") {
		t.Fatalf("once the sign-in expired: %d\n%s", p.status, p.body)
	}

	b.get("/auth/callback?state=" + url.QueryEscape(b.start("/")) + "&code=c0de")
	p := b.get("/")
	if p := b.do("POST", "/logout", url.Values{"csrf": {csrfRe.FindStringSubmatch(p.body)[1]}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("log out: %d", p.status)
	}
	if p := b.get("/runs"); p.status != http.StatusUnauthorized {
		t.Fatalf("after logging out: %d", p.status)
	}
}

// Sign-ins under way are bounded: one older than 10 minutes, or pushed
// out by 256 newer ones, is no longer taken; nor is one completed in
// another browser than the one that started it, or a second time.
func TestSignInAttemptsAreBounded(t *testing.T) {
	e, _, c := newSignOnEnv(t)
	b := e.browser()
	refused := func(name, state string, by *browser) {
		t.Helper()
		if p := by.get("/auth/callback?state=" + url.QueryEscape(state) + "&code=c0de"); p.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400\n%s", name, p.status, p.body)
		}
	}
	old := b.start("/")
	c.advance(10*time.Minute + time.Second)
	refused("a sign-in 10 minutes old", old, b)

	first := b.start("/")
	for i := 0; i < 256; i++ {
		b.start(fmt.Sprintf("/runs?n=%d", i))
	}
	refused("the oldest of 257 sign-ins", first, b)

	state := b.start("/")
	refused("a sign-in completed in another browser", state, e.browser())
	state = b.start("/")
	if p := b.get("/auth/callback?state=" + url.QueryEscape(state) + "&code=c0de"); p.status != http.StatusOK {
		t.Fatalf("the sign-in: %d\n%s", p.status, p.body)
	}
	refused("the same redirect again", state, b)
}

// An issuer that cannot be reached fails the sign-in with 502, and is not
// the person's doing: it does not count against their address, as a
// refused sign-in does (after ten, 429, for the start of a sign-in too).
func TestIssuerUnreachableIsNotAGuess(t *testing.T) {
	e, so, _ := newSignOnEnv(t)
	b := e.browser()
	callback := func() page {
		return b.get("/auth/callback?state=" + url.QueryEscape(b.start("/")) + "&code=c0de")
	}
	so.answer(errors.New("exchanging the code: dial tcp 127.0.0.1:1: connection refused"))
	for i := 0; i < 12; i++ {
		if p := callback(); p.status != http.StatusBadGateway {
			t.Fatalf("sign-in %d with the issuer unreachable: %d, want 502\n%s", i+1, p.status, p.body)
		}
	}
	so.answer(fmt.Errorf("the ID token's nonce is not this sign-in's: %w", codemode.ErrNotAllowed))
	for i := 0; i < 10; i++ {
		if p := callback(); p.status != http.StatusBadRequest {
			t.Fatalf("refused sign-in %d: %d, want 400", i+1, p.status)
		}
	}
	if p := b.get("/auth/login?next=/"); p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Errorf("a sign-in after ten refused: %d, want 429 with Retry-After", p.status)
	}
}

// Sign-ins started from one address in a loop (anyone can start one: it
// is a GET) push out that address's own oldest, never a sign-in under way
// from another address.
func TestSignInsStartedInALoopDoNotPushOutOthers(t *testing.T) {
	e, _, c := newSignOnEnv(t)
	b := e.browser()
	state := b.start("/")
	c.advance(time.Second) // the oldest sign-in under way
	other := &http.Client{
		Transport:     &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer other.CloseIdleConnections()
	for range console.MaxAttempts + 10 {
		resp, err := other.Get(e.base + "/auth/login")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("starting a sign-in from another address: %d", resp.StatusCode)
		}
	}
	if p := b.get("/auth/callback?state=" + url.QueryEscape(state) + "&code=c0de"); p.status != http.StatusOK {
		t.Errorf("the sign-in after another address started %d: %d\n%s", console.MaxAttempts+10, p.status, p.body)
	}
}
