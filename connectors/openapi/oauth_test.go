package openapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"

	"github.com/google/go-cmp/cmp"
)

// A tokenEndpoint is a test OAuth 2.0 token endpoint: it records its
// requests (on its recorder) and answers token "tok-N" for the Nth, with
// the lifetime set in expiresIn (JSON, "" for none).
type tokenEndpoint struct {
	*recorder
	mu        sync.Mutex
	n         int
	expiresIn string
	// gate, when set, holds each answer until it is closed; got receives a
	// value as each request arrives.
	gate chan struct{}
	got  chan struct{}
}

func newTokenEndpoint(t *testing.T, expiresIn string) *tokenEndpoint {
	te := &tokenEndpoint{expiresIn: expiresIn}
	te.recorder = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if te.got != nil {
			te.got <- struct{}{}
		}
		if te.gate != nil {
			select {
			case <-te.gate:
			case <-r.Context().Done():
				return
			}
		}
		te.mu.Lock()
		te.n++
		body := fmt.Sprintf(`{"access_token":"tok-%d","token_type":"bearer"`, te.n)
		if te.expiresIn != "" {
			body += `,"expires_in":` + te.expiresIn
		}
		te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body+"}")
	})
	return te
}

// oauthCaller returns a caller of base authenticating with te, on clock.
func oauthCaller(t *testing.T, base string, te *tokenEndpoint, clock *fixture.Clock) *caller {
	c := newTestCaller(t, base, func(cfg *Config) {
		cfg.Auth = &Auth{OAuth2: &OAuth2{TokenURL: te.srv.URL + "/token", ClientID: "my app", ClientSecret: "s&cret:x", Scopes: []string{"read", "write"}}}
	})
	c.oauth.now = clock.Now
	return c
}

// bearers returns the Authorization headers of the requests rec got.
func bearers(rec *recorder) []string {
	var out []string
	for _, r := range rec.requests() {
		out = append(out, r.Header.Get("Authorization"))
	}
	return out
}

// TestOAuthTokenRequest checks the token request: a form POST of the
// client credentials grant with the scopes, the client authenticated with
// HTTP basic, its id and secret form-encoded (RFC 6749 section 2.3.1).
func TestOAuthTokenRequest(t *testing.T) {
	api := newRecorder(t, nil)
	te := newTokenEndpoint(t, "3600")
	c := oauthCaller(t, api.srv.URL, te, fixture.NewClock())
	callOK(t, c, &Operation{Method: "GET", Path: "/x"}, `{}`)
	got := te.last(t)
	form, _ := url.ParseQuery(string(got.Body))
	req := &http.Request{Header: got.Header}
	user, pass, ok := req.BasicAuth()
	if !ok {
		t.Fatalf("no basic authentication: %v", got.Header)
	}
	user, _ = url.QueryUnescape(user)
	pass, _ = url.QueryUnescape(pass)
	want := []string{"POST", "/token", "application/x-www-form-urlencoded", "client_credentials", "read write", "my app", "s&cret:x"}
	have := []string{got.Method, got.URI, got.Header.Get("Content-Type"), form.Get("grant_type"), form.Get("scope"), user, pass}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("token request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Bearer tok-1"}, bearers(api)); diff != "" {
		t.Errorf("API requests (-want +got):\n%s", diff)
	}
}

// TestOAuthExpiry checks that a token is cached, replaced shortly before
// it expires (30 s, or a quarter of a short life), and kept without an
// expiry until a 401.
func TestOAuthExpiry(t *testing.T) {
	for _, tt := range []struct {
		expiresIn string
		keep      time.Duration // still used this long after it was obtained
		replace   time.Duration // replaced this long after
	}{
		{"3600", 3570*time.Second - time.Nanosecond, 3570 * time.Second},
		{`"3600"`, 3570*time.Second - time.Nanosecond, 3570 * time.Second},
		{"40", 30*time.Second - time.Nanosecond, 30 * time.Second},
		{"", 10000 * time.Hour, -1},
	} {
		t.Run(tt.expiresIn, func(t *testing.T) {
			api := newRecorder(t, nil)
			te := newTokenEndpoint(t, tt.expiresIn)
			clock := fixture.NewClock()
			c := oauthCaller(t, api.srv.URL, te, clock)
			op := &Operation{Method: "GET", Path: "/x"}
			callOK(t, c, op, `{}`)
			clock.Advance(tt.keep)
			callOK(t, c, op, `{}`)
			want := []string{"Bearer tok-1", "Bearer tok-1"}
			if tt.replace > 0 {
				clock.Advance(tt.replace - tt.keep)
				callOK(t, c, op, `{}`)
				callOK(t, c, op, `{}`)
				want = append(want, "Bearer tok-2", "Bearer tok-2")
			}
			if diff := cmp.Diff(want, bearers(api)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := len(te.requests()); n != len(want)/2 {
				t.Errorf("%d token requests, want %d", n, len(want)/2)
			}
		})
	}
}

// TestOAuthRenewalsDoNotGrowTheScrubber: renewing the token again and
// again keeps the current and the previous token scrubbed (an answer in
// flight may hold the one just replaced) and forgets the older ones.
func TestOAuthRenewalsDoNotGrowTheScrubber(t *testing.T) {
	api := newRecorder(t, nil)
	te := newTokenEndpoint(t, "40")
	clock := fixture.NewClock()
	c := oauthCaller(t, api.srv.URL, te, clock)
	const n = 20
	for range n {
		callOK(t, c, &Operation{Method: "GET", Path: "/x"}, `{}`)
		clock.Advance(30 * time.Second)
	}
	if got := len(te.requests()); got != n {
		t.Fatalf("%d token requests, want %d", got, n)
	}
	text := fmt.Sprintf("tok-%d tok-%d", n, n-1)
	if got := c.scrub.String(text); got != "[redacted] [redacted]" {
		t.Errorf("String(%q) = %q: the current and the previous token are not both scrubbed", text, got)
	}
	for i := 1; i <= n-2; i++ {
		if tok := fmt.Sprintf("tok-%d", i); c.scrub.Contains(tok) {
			t.Errorf("%q, replaced two renewals ago, is still held", tok)
		}
	}
}

// TestOAuth401 checks that a 401 makes the call get a new token and send
// the request once more, and only once.
func TestOAuth401(t *testing.T) {
	var refused sync.Map // tokens the API refuses
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := refused.Load(r.Header.Get("Authorization")); ok || r.URL.Path == "/never" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"bad credentials"}`)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	refused.Store("Bearer tok-1", true)
	te := newTokenEndpoint(t, "3600")
	c := oauthCaller(t, api.srv.URL, te, fixture.NewClock())
	post := &Operation{Method: "POST", Path: "/x", Body: &Body{Prop: "body", MediaType: "application/json"}}
	res := callOK(t, c, post, `{"body":{"n":1}}`)
	if string(res.Value) != `"ok"` {
		t.Errorf("value %s", res.Value)
	}
	callOK(t, c, post, `{"body":{"n":2}}`)
	if diff := cmp.Diff([]string{"Bearer tok-1", "Bearer tok-2", "Bearer tok-2"}, bearers(api)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if reqs := api.requests(); string(reqs[1].Body) != `{"n":1}` {
		t.Errorf("the retry sent %q", reqs[1].Body)
	}

	before := len(api.requests())
	res, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/never"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Message != "401 Unauthorized: bad credentials (GET /never)" {
		t.Errorf("result %+v", res)
	}
	if n := len(api.requests()) - before; n != 2 {
		t.Errorf("%d requests after a 401, want 2", n)
	}
	if n := len(te.requests()); n != 3 {
		t.Errorf("%d token requests, want 3", n)
	}
}

// abandonCall starts a call that needs a token, waits until te got the
// token request, and cancels the call: the call must fail at once.
func abandonCall(t *testing.T, c *caller, te *tokenEndpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	quit := make(chan error, 1)
	go func() {
		_, err := c.call(ctx, &Operation{Method: "GET", Path: "/x"}, nil)
		quit <- err
	}()
	<-te.got
	cancel()
	if err := <-quit; err == nil {
		t.Error("the cancelled call succeeded")
	}
}

// TestOAuthShared checks that concurrent callers needing a token share
// one token request, and that a caller giving up does not fail the
// others. (That callers coming while the request is under way join it,
// rather than find its token cached, is oauth.Flight's test.)
func TestOAuthShared(t *testing.T) {
	const n = 8
	api := newRecorder(t, nil)
	te := newTokenEndpoint(t, "3600")
	te.gate, te.got = make(chan struct{}), make(chan struct{}, n)
	c := oauthCaller(t, api.srv.URL, te, fixture.NewClock())

	// One caller starts the token request and gives up while it is under
	// way.
	abandonCall(t, c, te)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			res, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/x"}, nil)
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", res.Message)
			}
			errs <- err
		})
	}
	close(te.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := len(te.requests()); got != 1 {
		t.Errorf("%d token requests, want 1", got)
	}
	want := make([]string, n)
	for i := range want {
		want[i] = "Bearer tok-1"
	}
	if diff := cmp.Diff(want, bearers(api)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// doneHook is a context that calls f the first time its Done is asked
// for: oauth.Flight asks once the caller has joined the run under way.
type doneHook struct {
	context.Context
	once sync.Once
	f    func()
}

func (c *doneHook) Done() <-chan struct{} {
	c.once.Do(c.f)
	return c.Context.Done()
}

// TestOAuthStaleNotHandedBack checks that a caller the API just refused
// token T is not handed T again by a token request it joined: one that
// another caller started without knowing T stale (its check of the cache
// came before T was cached), whose run finds T in the cache.
func TestOAuthStaleNotHandedBack(t *testing.T) {
	api := newRecorder(t, nil)
	te := newTokenEndpoint(t, "3600")
	c := oauthCaller(t, api.srv.URL, te, fixture.NewClock())
	ts := c.oauth
	if tok, err := ts.token(context.Background(), ""); err != nil || tok != "tok-1" {
		t.Fatalf("first token %q, %v", tok, err)
	}
	// The other caller's run, held until this caller has joined it.
	started, gate := make(chan struct{}), make(chan struct{})
	other := make(chan string, 1)
	go func() {
		tok, _ := ts.shared.Do(context.Background(), func(ctx context.Context) (string, error) {
			close(started)
			<-gate
			return ts.request(ctx, "")
		})
		other <- tok
	}()
	<-started
	tok, err := ts.token(&doneHook{Context: context.Background(), f: func() { close(gate) }}, "tok-1")
	if err != nil || tok == "tok-1" {
		t.Errorf("after a 401 with tok-1: token %q, %v; want a new one", tok, err)
	}
	if got := <-other; got != "tok-1" {
		t.Errorf("the other caller got %q, want the cached tok-1", got)
	}
}

// TestOAuthClose checks that closing the caller stops a token request
// under way (goleak checks the goroutine is gone).
func TestOAuthClose(t *testing.T) {
	api := newRecorder(t, nil)
	te := newTokenEndpoint(t, "3600")
	te.gate, te.got = make(chan struct{}), make(chan struct{}, 1)
	c := oauthCaller(t, api.srv.URL, te, fixture.NewClock())
	abandonCall(t, c, te)
	c.close()
	if _, err := c.oauth.token(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("token after close: %v", err)
	}
}

// TestOAuthErrors checks a failing token endpoint: the call fails with an
// error holding the endpoint's error code and description, scrubbed, and
// nothing else of its answer.
func TestOAuthErrors(t *testing.T) {
	const secret = "s3cret-client"
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"refused", 401, `{"error":"invalid_client","error_description":"secret s3cret-client is wrong","internal":"private-detail"}`, "the token endpoint answered 401 invalid_client: secret [redacted] is wrong"},
		{"no token", 200, `{"token_type":"bearer","note":"private-detail"}`, "the token endpoint's answer has no access_token"},
		{"token type", 200, `{"access_token":"abcd-private-detail","token_type":"mac"}`, `token_type "mac" is not supported (only Bearer is)`},
		{"expires_in", 200, `{"access_token":"abcd-private-detail","expires_in":"soon"}`, `expires_in "soon" is not a number of seconds`},
		{"not JSON", 500, `private-detail`, "the token endpoint answered 500"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, nil)
			te := newRecorder(t, answerWith(tt.status, "application/json", tt.body))
			c := newTestCaller(t, api.srv.URL, func(cfg *Config) {
				cfg.Auth = &Auth{OAuth2: &OAuth2{TokenURL: te.srv.URL + "/token", ClientID: "app", ClientSecret: secret}}
			})
			_, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/x"}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			want := "GET /x: oauth2: " + tt.want
			if err.Error() != want || strings.Contains(err.Error(), "private-detail") || strings.Contains(err.Error(), secret) {
				t.Errorf("error %q, want %q", err, want)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("the API got %d requests", n)
			}
		})
	}
}

// TestOAuthUnreachable checks that a token endpoint that cannot be reached
// fails the call with an error naming it.
func TestOAuthUnreachable(t *testing.T) {
	api := newRecorder(t, nil)
	te := newRecorder(t, nil)
	te.srv.Close()
	c := newTestCaller(t, api.srv.URL, func(cfg *Config) {
		cfg.Auth = &Auth{OAuth2: &OAuth2{TokenURL: te.srv.URL + "/token", ClientID: "app", ClientSecret: "s3cret-client"}}
	})
	_, err := c.call(context.Background(), &Operation{Method: "GET", Path: "/x"}, nil)
	if want := "GET /x: oauth2: token request to " + te.srv.URL + "/token: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
}
