package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// mustSignInRequired fails unless err wraps SignInRequired whose reason
// contains want, and returns it.
func mustSignInRequired(t *testing.T, err error, want string) *connectors.SignInRequired {
	t.Helper()
	sr, ok := connectors.AsSignInRequired(err)
	if !ok {
		t.Fatalf("got %v, want a SignInRequired (%q)", err, want)
	}
	if sr.Connector != "remote" || !strings.Contains(sr.Reason, want) {
		t.Fatalf("SignInRequired %+v, want connector remote and a reason with %q", sr, want)
	}
	return sr
}

// The whole path: a call without tokens needs a sign-in (and the next one
// is refused at once, without being sent); the sign-in discovers the
// server from its 401, registers a client, sends PKCE, state, the scope
// of the challenge and the resource; the call then carries the token; a
// second sign-in reuses the registration.
func TestSignInThenCall(t *testing.T) {
	f := oauthtest.New(t)
	f.ChallengeScope = "mcp:read"
	e := newEnv(t)
	var ended []error
	s := e.session(f, Config{OnSignInEnded: func(err error) { ended = append(ended, err) }})

	_, err := call(t, s, f)
	mustSignInRequired(t, err, "not signed in yet")
	hits := f.Hits()
	_, err = call(t, s, f)
	mustSignInRequired(t, err, "not signed in yet")
	if f.Hits() != hits {
		t.Errorf("a call known to need a sign-in reached the server (%d → %d requests)", hits, f.Hits())
	}
	if sr, err := s.NeedsSignIn(context.Background()); sr == nil || err != nil {
		t.Errorf("NeedsSignIn before the sign-in: %v, %v", sr, err)
	}

	page, err := signIn(t, s)
	if err != nil {
		t.Fatalf("sign-in: %v (page %s)", err, page)
	}
	if !strings.Contains(page, "Signed in") || !strings.Contains(page, "close this tab") {
		t.Errorf("the page after the redirect: %s", page)
	}
	if len(ended) != 1 || ended[0] != nil {
		t.Errorf("OnSignInEnded heard %v, want one successful sign-in", ended)
	}
	q := f.LastAuthorize()
	for k, want := range map[string]string{"scope": "mcp:read", "resource": f.ServerURL(), "code_challenge_method": "S256", "response_type": "code"} {
		if q.Get(k) != want {
			t.Errorf("authorization request %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if r := q.Get("redirect_uri"); !strings.HasPrefix(r, "http://127.0.0.1:") || !strings.HasSuffix(r, "/callback") {
		t.Errorf("redirect_uri %q is not a loopback one", r)
	}
	if len(q.Get("state")) < 20 {
		t.Errorf("state %q", q.Get("state"))
	}
	form := f.LastTokenForm()
	if form.Get("resource") != f.ServerURL() || form.Get("code_verifier") == "" || form.Get("grant_type") != "authorization_code" {
		t.Errorf("token request %v", form)
	}
	if status, err := call(t, s, f); status != http.StatusOK || err != nil {
		t.Fatalf("call after signing in: %d, %v", status, err)
	}
	if sr, err := s.NeedsSignIn(context.Background()); sr != nil || err != nil {
		t.Errorf("NeedsSignIn after the sign-in: %v, %v", sr, err)
	}
	// A process sharing the store uses the tokens without signing in.
	other := e.session(f, Config{})
	if status, err := call(t, other, f); status != http.StatusOK || err != nil {
		t.Fatalf("call from another process: %d, %v", status, err)
	}
	// A second sign-in reuses the registration (and its loopback port).
	redirect := q.Get("redirect_uri")
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	if regs, _, _, _ := f.Snapshot(); regs != 1 {
		t.Errorf("%d registrations, want 1 (kept and reused)", regs)
	}
	if got := f.LastAuthorize().Get("redirect_uri"); got != redirect {
		t.Errorf("second sign-in redirect %q, want the registered %q", got, redirect)
	}
	reg := f.Registrations()[0]
	if reg["application_type"] != "native" || !slices.Contains(toStrings(reg["grant_types"]), "refresh_token") || reg["token_endpoint_auth_method"] != "none" {
		t.Errorf("registration request %v", reg)
	}
}

// signedIn starts a test authorization server (changed by set, when
// given) and a session with cfg, signed in.
func signedIn(t *testing.T, cfg Config, set func(*oauthtest.Server)) (*oauthtest.Server, *env, *Session) {
	t.Helper()
	f := oauthtest.New(t)
	if set != nil {
		set(f)
	}
	e := newEnv(t)
	s := e.session(f, cfg)
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	return f, e, s
}

func rotating(f *oauthtest.Server) { f.Rotate = true }

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// Discovery finds the metadata wherever the specifications allow it to be,
// in their order, and falls back as the 2025-03-26 revision did.
func TestDiscoveryPlaces(t *testing.T) {
	tests := []struct {
		name   string
		set    func(f *oauthtest.Server)
		wanted string // a path that must have been requested
		never  string // a path that must not have been
	}{
		{"resource_metadata in the challenge", func(f *oauthtest.Server) {}, "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
		{"path-based well-known URL", func(f *oauthtest.Server) { f.PRMInHeader = false }, "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
		{"root well-known URL, resource the origin", func(f *oauthtest.Server) {
			f.PRMInHeader, f.PRMPath, f.PRMResource = false, "/.well-known/oauth-protected-resource", f.RS.URL
		}, "/.well-known/oauth-protected-resource", ""},
		{"custom location", func(f *oauthtest.Server) { f.PRMPath = "/custom/metadata/location.json" }, "/custom/metadata/location.json", "/.well-known/oauth-protected-resource/mcp"},
		{"issuer with a path: RFC 8414 inserted", func(f *oauthtest.Server) { f.IssuerPath = "/tenant1" }, "/.well-known/oauth-authorization-server/tenant1", "/.well-known/oauth-authorization-server"},
		{"issuer with a path: OpenID Connect appended", func(f *oauthtest.Server) { f.IssuerPath, f.OpenID = "/tenant1", true }, "/tenant1/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"},
		{"OpenID Connect discovery", func(f *oauthtest.Server) { f.OpenID = true }, "/.well-known/openid-configuration", ""},
		{"2025-03-26: metadata at the server's origin", func(f *oauthtest.Server) { f.NoPRM, f.ASOnRS = true, true }, "/.well-known/oauth-authorization-server", ""},
		{"2025-03-26: default endpoints", func(f *oauthtest.Server) { f.NoPRM, f.ASOnRS, f.NoMetadata = true, true, true }, "/authorize", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := oauthtest.New(t)
			tt.set(f)
			e := newEnv(t)
			s := e.session(f, Config{})
			_, err := call(t, s, f)
			mustSignInRequired(t, err, "not signed in")
			if page, err := signIn(t, s); err != nil {
				t.Fatalf("sign-in: %v (%s)", err, page)
			}
			if status, err := call(t, s, f); status != http.StatusOK || err != nil {
				t.Fatalf("call: %d, %v", status, err)
			}
			if f.HitsOf(tt.wanted) == 0 {
				t.Errorf("%s was never requested", tt.wanted)
			}
			if tt.never != "" && f.HitsOf(tt.never) != 0 {
				t.Errorf("%s was requested", tt.never)
			}
			if got := f.LastAuthorize().Get("resource"); got == "" {
				t.Error("no resource parameter")
			}
		})
	}
}

// Metadata naming another resource is refused before anything is asked
// of the authorization server, and the error names both: at the first
// 401 (no sign-in is waited for: none could succeed) and at a sign-in.
func TestResourceMismatch(t *testing.T) {
	f := oauthtest.New(t)
	f.PRMResource = "https://evil.example.com/mcp"
	e := newEnv(t)
	s := e.session(f, Config{})
	_, err := call(t, s, f)
	if _, ok := connectors.AsSignInRequired(err); ok || !errors.Is(err, ErrNoSignIn) || !errors.Is(err, errResourceMismatch) {
		t.Fatalf("call: %v, want ErrNoSignIn for the mismatch, not a SignInRequired", err)
	}
	_, err = s.BeginSignIn(context.Background())
	if !errors.Is(err, errResourceMismatch) || !strings.Contains(err.Error(), "evil.example.com") || !strings.Contains(err.Error(), f.RS.URL) {
		t.Fatalf("BeginSignIn: %v, want a mismatch naming both resources", err)
	}
	if regs, _, _, authorizes := f.Snapshot(); regs+authorizes != 0 {
		t.Errorf("%d registrations and %d authorization requests after a mismatch", regs, authorizes)
	}
}

func TestResourceMatches(t *testing.T) {
	for _, tt := range []struct {
		resource, server string
		want             bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://A.example:443/mcp/", "https://a.example/mcp", true},
		{"https://a.example", "https://a.example/mcp", true},
		{"https://a.example/", "https://a.example/mcp", true},
		{"https://a.example/mc", "https://a.example/mcp", false},
		{"https://a.example/mcp/x", "https://a.example/mcp", false},
		{"http://a.example/mcp", "https://a.example/mcp", false},
		{"https://a.example:8443/mcp", "https://a.example/mcp", false},
		{"https://evil.example/mcp", "https://a.example/mcp", false},
	} {
		if got := resourceMatches(tt.resource, tt.server); got != tt.want {
			t.Errorf("resourceMatches(%q, %q) = %v, want %v", tt.resource, tt.server, got, tt.want)
		}
	}
}

// The redirect is checked: a state this sign-in did not send is refused
// (and the sign-in goes on), iss must be the authorization server's when
// it sends one or says it does (RFC 9207), and an error is reported.
func TestRedirectChecks(t *testing.T) {
	t.Run("state", func(t *testing.T) {
		f := oauthtest.New(t)
		e := newEnv(t)
		s := e.session(f, Config{})
		a, err := s.BeginSignIn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		redirect := a.redirect + "?code=stolen-code-1234&state=not-the-state"
		resp, err := http.Get(redirect)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a redirect with another state: %d, want 400", resp.StatusCode)
		}
		select {
		case <-a.done:
			t.Fatal("a redirect with another state ended the sign-in")
		default:
		}
		// Any local process can send them: their warnings are rate-bound,
		// and the next line written counts those that were not.
		forge := func(n int) {
			for range n {
				resp, err := http.Get(redirect)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
		}
		lines := func() []string {
			var out []string
			for l := range strings.Lines(e.logs.String()) {
				if strings.Contains(l, "did not send") {
					out = append(out, l)
				}
			}
			return out
		}
		forge(29)
		if got := lines(); len(got) != throttle.DefaultBurst {
			t.Errorf("%d warnings for 30 forged redirects, want %d", len(got), throttle.DefaultBurst)
		}
		e.clock.Advance(throttle.DefaultEvery)
		forge(1)
		if got := lines(); len(got) != throttle.DefaultBurst+1 || !strings.Contains(got[len(got)-1], "unlogged=20") {
			t.Errorf("after %v, warnings %q; want one more, counting 20 unlogged", throttle.DefaultEvery, got)
		}
		browse(t, a.URL())
		if err := a.Wait(context.Background()); err != nil {
			t.Fatalf("the real redirect after a forged one: %v", err)
		}
		// One use: the same redirect again is refused.
		resp, err = http.Get(a.redirect + "?code=x&state=" + a.state)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict {
			t.Errorf("a second redirect: %d, want 409", resp.StatusCode)
		}
	})
	for _, tt := range []struct {
		name string
		set  func(f *oauthtest.Server)
		want string
	}{
		{"iss of another server", func(f *oauthtest.Server) { f.IssParam, f.RedirectIss = true, "https://other.example" }, "RFC 9207"},
		{"iss present though not announced", func(f *oauthtest.Server) { f.RedirectIss = "https://other.example" }, "other.example"},
		{"iss announced but missing", func(f *oauthtest.Server) { f.IssParam, f.NoRedirectIss = true, true }, "no iss"},
		{"access denied", func(f *oauthtest.Server) { f.DenyWith = "access_denied" }, "access_denied: the person said no"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := oauthtest.New(t)
			tt.set(f)
			e := newEnv(t)
			s := e.session(f, Config{})
			page, err := signIn(t, s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("sign-in: %v, want an error with %q", err, tt.want)
			}
			if !strings.Contains(page, "Sign-in failed") {
				t.Errorf("page %s", page)
			}
			if ok, _ := s.Signed(context.Background()); ok {
				t.Error("tokens were stored")
			}
		})
	}
	t.Run("iss of the server", func(t *testing.T) {
		f := oauthtest.New(t)
		f.IssParam = true
		e := newEnv(t)
		if _, err := signIn(t, e.session(f, Config{})); err != nil {
			t.Fatal(err)
		}
	})
}

// A rotating refresh token is sent once, whatever the number of callers
// in one process and of processes on one store, SQLite or PostgreSQL (the
// replicas' case): the server detects reuse and would revoke the grant.
func TestRefreshOnceAcrossProcesses(t *testing.T) {
	for _, db := range []string{"SQLite", "PostgreSQL"} {
		t.Run(db, func(t *testing.T) {
			f := oauthtest.New(t)
			f.Rotate = true
			e := newEnv(t)
			if db == "PostgreSQL" {
				e.onPostgres()
			}
			first := e.session(f, Config{})
			if _, err := signIn(t, first); err != nil {
				t.Fatal(err)
			}
			procs := []*Session{first, e.session(f, Config{}), e.session(f, Config{})}
			for round := 1; round <= 3; round++ {
				e.clock.Advance(2 * time.Hour) // every access token expired
				var wg sync.WaitGroup
				errs := make(chan error, 30)
				for i := range 30 {
					s := procs[i%len(procs)]
					wg.Go(func() {
						if status, err := call(t, s, f); err != nil || status != http.StatusOK {
							errs <- errors.Join(err, errors.New(http.StatusText(status)))
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("round %d: %v", round, err)
				}
				if _, refreshes, reuses, _ := f.Snapshot(); refreshes != round || reuses != 0 {
					t.Fatalf("round %d: %d refreshes (%d reuses), want %d and 0", round, refreshes, reuses, round)
				}
			}
		})
	}
}

// A token the server refuses before it expires is refreshed, and the
// request sent again with its body.
func TestRefreshOn401(t *testing.T) {
	f, _, s := signedIn(t, Config{}, rotating)
	f.ExpireAccess()
	if status, err := call(t, s, f); status != http.StatusOK || err != nil {
		t.Fatalf("call after the server dropped the access token: %d, %v", status, err)
	}
	if _, refreshes, _, _ := f.Snapshot(); refreshes != 1 {
		t.Errorf("%d refreshes, want 1", refreshes)
	}
}

// Revoked at the server: the next call needs a sign-in (not an error on
// every call), the store says so to every process, and a new sign-in
// ends it.
func TestRevokedGrant(t *testing.T) {
	f, e, s := signedIn(t, Config{}, rotating)
	f.RevokeAll()
	_, err := call(t, s, f)
	mustSignInRequired(t, err, "refused the refresh token")
	if !strings.Contains(e.logs.String(), "invalid_grant") {
		t.Errorf("the refusal is not logged with what the server answered:\n%s", e.logs)
	}
	hits := f.Hits()
	_, err = call(t, s, f)
	mustSignInRequired(t, err, "refused the refresh token")
	if f.Hits() != hits {
		t.Error("a call known to need a sign-in reached the server")
	}
	other := e.session(f, Config{})
	if sr, err := other.NeedsSignIn(context.Background()); sr == nil || err != nil || !strings.Contains(sr.Reason, "refused") {
		t.Errorf("another process: NeedsSignIn %v, %v", sr, err)
	}
	if _, err := signIn(t, other); err != nil {
		t.Fatal(err)
	}
	if status, err := call(t, s, f); status != http.StatusOK || err != nil {
		t.Fatalf("call after another process signed in again: %d, %v", status, err)
	}
}

// A refresh that fails for another reason (the endpoint down) is reported
// with what the server answered, and the grant is kept.
func TestRefreshFailureReported(t *testing.T) {
	f, e, s := signedIn(t, Config{Timeout: 300 * time.Millisecond}, nil)
	hang := make(chan struct{})
	defer close(hang)
	f.Set(func(f *oauthtest.Server) { f.HangToken = hang })
	e.clock.Advance(2 * time.Hour)
	_, err := call(t, s, f)
	if err == nil || !strings.Contains(err.Error(), "refreshing the access token") || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("call with the token endpoint hanging: %v", err)
	}
	if _, ok := connectors.AsSignInRequired(err); ok {
		t.Error("a transient failure was reported as a sign-in")
	}
	if ok, _ := s.Signed(context.Background()); !ok {
		t.Error("the grant was dropped after a transient failure")
	}
}

// 403 insufficient_scope: the next sign-in asks for the union; a server
// that never grants enough is given up on after a bounded number of
// sign-ins, with an error saying so.
func TestStepUp(t *testing.T) {
	f := oauthtest.New(t)
	f.ChallengeScope = "mcp:read"
	f.NeedScopes = []string{"mcp:read", "mcp:write"}
	e := newEnv(t)
	s := e.session(f, Config{})
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, s, f)
	mustSignInRequired(t, err, "scopes mcp:read mcp:write")
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	if got := sortedScopes(f.LastAuthorize().Get("scope")); !slices.Equal(got, []string{"mcp:read", "mcp:write"}) {
		t.Errorf("step-up scope %v", got)
	}
	if status, err := call(t, s, f); status != http.StatusOK || err != nil {
		t.Fatalf("call after the step-up: %d, %v", status, err)
	}
}

// The scopes a server asks for are clipped in what the session says (a
// challenge may hold kilobytes of them).
func TestStepUpGivesUp(t *testing.T) {
	f := oauthtest.New(t)
	f.ChallengeScope = "mcp:admin " + strings.Repeat("mcp:more ", 1000)
	f.AlwaysForbidden = true
	e := newEnv(t)
	s := e.session(f, Config{})
	var last error
	for range 10 {
		_, err := call(t, s, f)
		if err != nil && len(err.Error()) > 1000 {
			t.Fatalf("an error of %d bytes: the server's scopes are not clipped", len(err.Error()))
		}
		if sr, _ := s.NeedsSignIn(context.Background()); sr != nil && len(sr.Reason) > 1000 {
			t.Fatalf("NeedsSignIn's reason is %d bytes: the server's scopes are not clipped", len(sr.Reason))
		}
		if _, ok := connectors.AsSignInRequired(err); !ok {
			last = err
			break
		}
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
	}
	if last == nil || !strings.Contains(last.Error(), "still answers 403 insufficient_scope (it asks for mcp:admin mcp:more") || !strings.Contains(last.Error(), "after 2 step-up(s); giving up") {
		t.Fatalf("after repeated 403s: %v, want an error giving up on the scope", last)
	}
	if _, _, _, authorizes := f.Snapshot(); authorizes > 1+maxStepUps {
		t.Errorf("%d sign-ins, want at most %d", authorizes, 1+maxStepUps)
	}
}

// Scopes: the challenge's, else scopes_supported, else none; offline_access
// only when the authorization server lists it.
func TestScopeSelection(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(f *oauthtest.Server)
		cfg  []string
		want []string
	}{
		{"challenge", func(f *oauthtest.Server) { f.ChallengeScope, f.PRMScopes = "a", []string{"a", "b"} }, nil, []string{"a"}},
		{"scopes_supported", func(f *oauthtest.Server) { f.PRMScopes = []string{"a", "b"} }, nil, []string{"a", "b"}},
		{"none", func(f *oauthtest.Server) {}, nil, nil},
		{"configured", func(f *oauthtest.Server) { f.ChallengeScope = "a" }, []string{"x"}, []string{"x"}},
		{"offline_access listed", func(f *oauthtest.Server) { f.PRMScopes, f.ASScopes = []string{"a"}, []string{"a", "offline_access"} }, nil, []string{"a", "offline_access"}},
		{"offline_access not listed", func(f *oauthtest.Server) { f.PRMScopes, f.ASScopes = []string{"a"}, []string{"a", "b"} }, nil, []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := oauthtest.New(t)
			tt.set(f)
			e := newEnv(t)
			s := e.session(f, Config{Scopes: tt.cfg})
			_, _ = call(t, s, f)
			if _, err := signIn(t, s); err != nil {
				t.Fatal(err)
			}
			q := f.LastAuthorize()
			if got := sortedScopes(q.Get("scope")); !slices.Equal(got, tt.want) {
				t.Errorf("scope %v, want %v", got, tt.want)
			}
			if _, has := q["scope"]; has != (tt.want != nil) {
				t.Errorf("scope parameter present: %v", has)
			}
		})
	}
}

// Client identity: a configured client (with its secret as the server
// wants it), a client ID metadata document when the server takes one,
// else a registration; without any, an error naming the setting.
func TestClientIdentity(t *testing.T) {
	t.Run("pre-registered, client_secret_basic", func(t *testing.T) {
		f := oauthtest.New(t)
		f.NoRegistration, f.ClientID, f.ClientSecret = true, "pre-registered", "pre-registered-secret"
		f.AuthMethods = []string{"client_secret_basic"}
		e := newEnv(t)
		s := e.session(f, Config{ClientID: "pre-registered", ClientSecret: "pre-registered-secret"})
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
		if _, auth := f.TokenRequests(); !strings.HasPrefix(auth[len(auth)-1], "Basic ") {
			t.Errorf("token request authentication %q", auth)
		}
	})
	t.Run("pre-registered, client_secret_post", func(t *testing.T) {
		f := oauthtest.New(t)
		f.ClientID, f.ClientSecret = "pre-registered", "pre-registered-secret"
		f.AuthMethods = []string{"client_secret_post"}
		e := newEnv(t)
		s := e.session(f, Config{ClientID: "pre-registered", ClientSecret: "pre-registered-secret"})
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
		if f.LastTokenForm().Get("client_secret") == "" {
			t.Error("no client_secret in the form")
		}
		if regs, _, _, _ := f.Snapshot(); regs != 0 {
			t.Errorf("%d registrations", regs)
		}
	})
	t.Run("client ID metadata document", func(t *testing.T) {
		f := oauthtest.New(t)
		f.CIMD = true
		e := newEnv(t)
		s := e.session(f, Config{ClientMetadataURL: "https://client.example/codemode.json"})
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
		if got := f.LastAuthorize().Get("client_id"); got != "https://client.example/codemode.json" {
			t.Errorf("client_id %q", got)
		}
		if regs, _, _, _ := f.Snapshot(); regs != 0 {
			t.Errorf("%d registrations", regs)
		}
	})
	t.Run("metadata document not supported: registration", func(t *testing.T) {
		f := oauthtest.New(t)
		e := newEnv(t)
		s := e.session(f, Config{ClientMetadataURL: "https://client.example/codemode.json"})
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
		if regs, _, _, _ := f.Snapshot(); regs != 1 {
			t.Errorf("%d registrations", regs)
		}
	})
	t.Run("registration with a secret", func(t *testing.T) {
		f := oauthtest.New(t)
		f.AuthMethods = []string{"client_secret_basic"}
		e := newEnv(t)
		s := e.session(f, Config{})
		if _, err := signIn(t, s); err != nil {
			t.Fatal(err)
		}
		if _, auth := f.TokenRequests(); !strings.HasPrefix(auth[len(auth)-1], "Basic ") {
			t.Errorf("token request authentication %q", auth)
		}
	})
	t.Run("nothing to sign in as", func(t *testing.T) {
		f := oauthtest.New(t)
		f.NoRegistration = true
		e := newEnv(t)
		_, err := e.session(f, Config{}).BeginSignIn(context.Background())
		if err == nil || !strings.Contains(err.Error(), "oauth.client_id") {
			t.Fatalf("BeginSignIn: %v", err)
		}
	})
	t.Run("no PKCE", func(t *testing.T) {
		f := oauthtest.New(t)
		f.NoPKCE = true
		e := newEnv(t)
		_, err := e.session(f, Config{}).BeginSignIn(context.Background())
		if err == nil || !strings.Contains(err.Error(), "PKCE") {
			t.Fatalf("BeginSignIn: %v", err)
		}
	})
}

// The client credentials grant needs no person: the token is obtained on
// the server's 401 and the call goes through, with a secret or a signed
// assertion.
func TestClientCredentials(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil || jws.AlgOf(signer.Public()) != "ES256" {
		t.Fatalf("ParsePrivateKey: %v, %T", err, signer)
	}
	for _, tt := range []struct {
		name    string
		methods []string
		cfg     Config
		check   func(t *testing.T, f *oauthtest.Server)
	}{
		{"client_secret_basic", []string{"client_secret_basic"}, Config{ClientSecret: "cc-secret-value"}, func(t *testing.T, f *oauthtest.Server) {
			if _, auth := f.TokenRequests(); !strings.HasPrefix(auth[0], "Basic ") {
				t.Errorf("authentication %q", auth[0])
			}
		}},
		{"client_secret_post", []string{"client_secret_post"}, Config{ClientSecret: "cc-secret-value"}, func(t *testing.T, f *oauthtest.Server) {
			if forms, _ := f.TokenRequests(); forms[0].Get("client_secret") == "" {
				t.Error("no client_secret in the form")
			}
		}},
		{"private_key_jwt", []string{"private_key_jwt"}, Config{PrivateKey: signer}, func(t *testing.T, f *oauthtest.Server) {
			forms, _ := f.TokenRequests()
			if f.Assertions() != 1 || forms[0].Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
				t.Errorf("%d assertions; form %v", f.Assertions(), forms[0])
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := oauthtest.New(t)
			f.ClientID, f.ClientSecret, f.ECKey, f.AuthMethods = "machine", "cc-secret-value", &key.PublicKey, tt.methods
			f.PRMScopes = []string{"mcp:read"}
			e := newEnv(t)
			cfg := tt.cfg
			cfg.Grant, cfg.ClientID = GrantClientCredentials, "machine"
			s := e.session(f, cfg)
			if status, err := call(t, s, f); status != http.StatusOK || err != nil {
				t.Fatalf("call: %d, %v", status, err)
			}
			tt.check(t, f)
			forms, _ := f.TokenRequests()
			form := forms[0]
			if form.Get("grant_type") != "client_credentials" || form.Get("resource") != f.ServerURL() || form.Get("scope") != "mcp:read" {
				t.Errorf("token request %v", form)
			}
			// Expired: a new token, no person involved.
			e.clock.Advance(2 * time.Hour)
			if status, err := call(t, s, f); status != http.StatusOK || err != nil {
				t.Fatalf("call after expiry: %d, %v", status, err)
			}
			if forms, _ := f.TokenRequests(); len(forms) != 2 {
				t.Errorf("%d token requests, want 2", len(forms))
			}
			if _, err := s.BeginSignIn(context.Background()); err == nil {
				t.Error("BeginSignIn of a client credentials session")
			}
		})
	}
}

// Concurrent calls of a client credentials session that has no token yet
// share one token request: each is answered 401, and the first to ask
// starts the request the others join, or find done.
func TestClientCredentialsSharedRequest(t *testing.T) {
	f := oauthtest.New(t)
	f.ClientID, f.ClientSecret = "machine", "cc-secret-value"
	e := newEnv(t)
	s := e.session(f, Config{Grant: GrantClientCredentials, ClientID: "machine", ClientSecret: "cc-secret-value"})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if status, err := call(t, s, f); status != http.StatusOK || err != nil {
				errs <- fmt.Errorf("call: %d, %v", status, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if forms, _ := f.TokenRequests(); len(forms) != 1 {
		t.Errorf("%d token requests, want 1", len(forms))
	}
}

// Every answer read is bounded, and so is every wait.
func TestBoundedAnswers(t *testing.T) {
	t.Run("huge metadata", func(t *testing.T) {
		f := oauthtest.New(t)
		f.MetadataPad = 2 << 20
		e := newEnv(t)
		_, err := e.session(f, Config{}).BeginSignIn(context.Background())
		if !errors.Is(err, errTooLarge) {
			t.Fatalf("BeginSignIn with 2 MiB of metadata: %v", err)
		}
	})
	t.Run("hanging token endpoint", func(t *testing.T) {
		f := oauthtest.New(t)
		hang := make(chan struct{})
		defer close(hang)
		f.HangToken = hang
		e := newEnv(t)
		s := e.session(f, Config{Timeout: 200 * time.Millisecond})
		if _, err := signIn(t, s); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Fatalf("sign-in against a hanging token endpoint: %v", err)
		}
	})
	t.Run("sign-in nobody completes", func(t *testing.T) {
		f := oauthtest.New(t)
		e := newEnv(t)
		var ended []error
		s := e.session(f, Config{SignInTimeout: 50 * time.Millisecond, OnSignInEnded: func(err error) { ended = append(ended, err) }})
		a, err := s.BeginSignIn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "did not complete within") {
			t.Fatalf("Wait: %v", err)
		}
		if len(ended) != 1 || ended[0] == nil {
			t.Errorf("OnSignInEnded heard %v, want one failed sign-in", ended)
		}
	})
}

// Closing a sign-in waits for the redirect it is answering: the code's
// exchange stops, and the browser gets its page (the connection is not
// cut under it, nor the answer left running after Close).
func TestCloseWaitsForTheRedirect(t *testing.T) {
	f := oauthtest.New(t)
	e := newEnv(t)
	st := e.store()
	storing := make(chan struct{})
	s := e.session(f, Config{Store: replaceFunc{Store: st, replace: func(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
		if kind != KindGrant {
			return st.ReplaceRecord(ctx, kind, id, old, new)
		}
		close(storing)
		<-ctx.Done() // the grant is stored once the attempt ends
		return false, ctx.Err()
	}}})
	a, err := s.BeginSignIn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		page   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get(a.URL())
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b), err}
	}()
	<-storing
	a.Close()
	if ans := <-got; ans.err != nil || ans.status != http.StatusBadRequest || !strings.Contains(ans.page, "Sign-in failed") {
		t.Fatalf("the browser got %d %q, %v; want the page saying the sign-in failed", ans.status, ans.page, ans.err)
	}
}

// Sign out forgets the grant (revoking it at the server) in every process.
func TestSignOut(t *testing.T) {
	f, e, s := signedIn(t, Config{}, rotating)
	if err := s.SignOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.HitsOf("/revoke") == 0 {
		t.Error("nothing was revoked")
	}
	other := e.session(f, Config{})
	if ok, _ := other.Signed(context.Background()); ok {
		t.Error("another process still sees the grant")
	}
	_, err := call(t, s, f)
	mustSignInRequired(t, err, "signed out")
}

// No token, code, verifier or client secret appears in a log line, an
// error, a page or the database file; the scrubber knows every one.
func TestNoSecretLeaks(t *testing.T) {
	f := oauthtest.New(t)
	f.Rotate = true
	f.AuthMethods = []string{"client_secret_basic"} // the registration gets a secret
	f.ChallengeScope = "mcp:read"
	f.NeedScopes = []string{"mcp:read", "mcp:write"}
	e := newEnv(t)
	s := e.session(f, Config{})
	var texts []string
	note := func(err error) {
		if err != nil {
			texts = append(texts, err.Error())
		}
	}
	_, err := call(t, s, f)
	note(err)
	page, err := signIn(t, s)
	note(err)
	texts = append(texts, page)
	_, err = call(t, s, f) // 403: step up
	note(err)
	page, err = signIn(t, s)
	note(err)
	texts = append(texts, page)
	e.clock.Advance(2 * time.Hour)
	_, err = call(t, s, f) // refresh
	note(err)
	f.RevokeAll()
	e.clock.Advance(2 * time.Hour)
	_, err = call(t, s, f) // refused refresh
	note(err)
	a, err := s.BeginSignIn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, a.URL())
	a.Close()

	secrets := append(f.Secrets(), a.verifier)
	if len(secrets) < 8 {
		t.Fatalf("only %d secrets were issued: the flow did not run", len(secrets))
	}
	var db []byte
	for _, p := range []string{e.path, e.path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		db = append(db, b...)
	}
	if len(db) == 0 {
		t.Fatal("the database is empty")
	}
	texts = append(texts, e.logs.String(), string(db))
	tokens := issuedTokens(f)
	var ended []string // the codes and verifiers of the sign-ins, all closed
	forms, _ := f.TokenRequests()
	for _, form := range forms {
		ended = append(ended, form.Get("code"), form.Get("code_verifier"))
	}
	ended = append(ended, a.verifier)
	for _, sec := range secrets {
		// Tokens replaced two generations ago are forgotten (see
		// scrub.Slot), and so are the codes and verifiers of sign-ins
		// closed; the others are still held.
		if i := slices.Index(tokens, sec); (i < 0 || i >= len(tokens)-2) && !slices.Contains(ended, sec) && !e.scrub.Contains(sec) {
			t.Errorf("the scrubber does not know %q", sec)
		}
		for _, txt := range texts {
			if strings.Contains(txt, sec) {
				t.Errorf("%q appears in %.200q", sec, txt)
			}
		}
	}
}

// The token goes to the server's origin only.
func TestTokenStaysWithTheServer(t *testing.T) {
	f := oauthtest.New(t)
	e := newEnv(t)
	s := e.session(f, Config{})
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header.Get("Authorization") }))
	defer other.Close()
	c := &http.Client{Transport: s.Transport(http.DefaultTransport)}
	resp, err := c.Get(other.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-seen; got != "" {
		t.Errorf("another origin got Authorization %q", got)
	}
}

// A process that read the store before anyone signed in does not read it
// on every request, but when the server answers 401 it looks again, and
// uses the grant another process stored since, without asking for a
// sign-in.
func TestGrantOfAnotherProcessOn401(t *testing.T) {
	f := oauthtest.New(t)
	e := newEnv(t)
	s := e.session(f, Config{})
	if sr, err := s.NeedsSignIn(context.Background()); sr != nil || err != nil {
		t.Fatalf("NeedsSignIn of a session that knows nothing yet: %v, %v", sr, err)
	}
	if _, err := signIn(t, e.session(f, Config{})); err != nil {
		t.Fatal(err)
	}
	if status, err := call(t, s, f); status != http.StatusOK || err != nil {
		t.Fatalf("call: %d, %v", status, err)
	}
}

// issuedTokens lists the access and refresh tokens f issued, in order.
func issuedTokens(f *oauthtest.Server) []string {
	var out []string
	for _, v := range f.Secrets() {
		if strings.HasPrefix(v, "access-token-") || strings.HasPrefix(v, "refresh-token-") {
			out = append(out, v)
		}
	}
	return out
}

// TestRefreshesDoNotGrowTheScrubber: a session refreshing its rotating
// tokens again and again keeps the current and the previous pair
// scrubbed (an answer in flight may hold the one just replaced) and
// forgets the older ones, so the scrubber does not grow with uptime.
func TestRefreshesDoNotGrowTheScrubber(t *testing.T) {
	f := oauthtest.New(t)
	f.Rotate = true
	e := newEnv(t)
	s := e.session(f, Config{})
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		e.clock.Advance(2 * time.Hour)
		if status, err := call(t, s, f); err != nil || status != http.StatusOK {
			t.Fatalf("a call after a refresh: %d, %v", status, err)
		}
	}
	tokens := issuedTokens(f)
	if len(tokens) < 40 {
		t.Fatalf("only %d tokens were issued: the refreshes did not run", len(tokens))
	}
	cur, prev, old := tokens[len(tokens)-2:], tokens[len(tokens)-4:len(tokens)-2], tokens[:len(tokens)-4]
	text := strings.Join(append(slices.Clone(cur), prev...), " ")
	if got := e.scrub.String(text); strings.Contains(got, "token-") {
		t.Errorf("the current and the previous tokens are not all scrubbed: %q", got)
	}
	for _, tok := range old {
		if e.scrub.Contains(tok) {
			t.Errorf("%q, replaced two refreshes ago, is still held: the scrubber grows with every refresh", tok)
		}
	}
}

// TestAssertionsDoNotGrowTheScrubber: each token request of a
// private_key_jwt client signs a new assertion; the scrubber keeps the
// last two, not every one ever signed.
func TestAssertionsDoNotGrowTheScrubber(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	f := oauthtest.New(t)
	f.ClientID, f.ECKey, f.AuthMethods = "machine", &key.PublicKey, []string{"private_key_jwt"}
	e := newEnv(t)
	s := e.session(f, Config{Grant: GrantClientCredentials, ClientID: "machine", PrivateKey: signer})
	for range 10 {
		if status, err := call(t, s, f); status != http.StatusOK || err != nil {
			t.Fatalf("call: %d, %v", status, err)
		}
		e.clock.Advance(2 * time.Hour)
	}
	forms, _ := f.TokenRequests()
	if len(forms) != 10 {
		t.Fatalf("%d token requests, want 10", len(forms))
	}
	for i, form := range forms {
		a := form.Get("client_assertion")
		if held, want := e.scrub.Contains(a), i >= len(forms)-2; held != want {
			t.Errorf("assertion %d of %d: held %v, want %v", i+1, len(forms), held, want)
		}
	}
}

// TestSignInsDoNotGrowTheScrubber: a sign-in's verifier, state and code
// are scrubbed while it is under way, and forgotten once it is closed, so
// that sign-in after sign-in does not grow the scrubber.
func TestSignInsDoNotGrowTheScrubber(t *testing.T) {
	f := oauthtest.New(t)
	e := newEnv(t)
	s := e.session(f, Config{})
	var ended []string
	for range 10 {
		a, err := s.BeginSignIn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{a.state, a.verifier} {
			if !e.scrub.Contains(v) {
				t.Errorf("%q of a sign-in under way is not scrubbed", v)
			}
		}
		browse(t, a.URL())
		if err := a.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		code := f.LastTokenForm().Get("code")
		if !e.scrub.Contains(code) {
			t.Errorf("the code %q of a sign-in not closed yet is not scrubbed", code)
		}
		a.Close()
		ended = append(ended, a.state, a.verifier, code)
	}
	for _, v := range ended {
		if e.scrub.Contains(v) {
			t.Errorf("%q of a closed sign-in is still held: the scrubber grows with every sign-in", v)
		}
	}
}
