package oauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// mustNotHold fails when err's message holds one of secrets.
func mustNotHold(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if err != nil && strings.Contains(err.Error(), sec) {
			t.Errorf("the error shows the secret %q: %v", sec, err)
		}
	}
}

// A refresh the token endpoint refuses (invalid_grant, or invalid_client:
// the client's secret was changed) needs a sign-in, stored for every
// process, even when the issuer's error_description echoes the configured
// client secret: the refusal is read as a refusal, not as a transient
// failure, and the secret is not shown.
func TestRefusedRefreshEchoingTheSecret(t *testing.T) {
	const id, secret = "pre-registered", "configured-secret-5d1e"
	for _, tt := range []struct {
		name, method string
		refuse       func(*oauthtest.Server)
		code         string
	}{
		{"invalid_grant, client_secret_basic", "client_secret_basic", func(f *oauthtest.Server) { f.RevokeAll() }, "invalid_grant"},
		{"invalid_grant, client_secret_post", "client_secret_post", func(f *oauthtest.Server) { f.RevokeAll() }, "invalid_grant"},
		{"invalid_client, client_secret_basic", "client_secret_basic", func(f *oauthtest.Server) {
			f.Set(func(f *oauthtest.Server) { f.ClientSecret = "rotated-by-the-admin" })
		}, "invalid_client"},
		{"invalid_client, client_secret_post", "client_secret_post", func(f *oauthtest.Server) {
			f.Set(func(f *oauthtest.Server) { f.ClientSecret = "rotated-by-the-admin" })
		}, "invalid_client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, e, s := signedIn(t, Config{ClientID: id, ClientSecret: secret}, func(f *oauthtest.Server) {
				f.ClientID, f.ClientSecret, f.AuthMethods, f.NoRegistration = id, secret, []string{tt.method}, true
			})
			f.Set(func(f *oauthtest.Server) { f.EchoErrors = true })
			tt.refuse(f)
			e.clock.Advance(2 * time.Hour)
			_, err := call(t, s, f)
			mustSignInRequired(t, err, "refused the refresh token")
			mustNotHold(t, err, secret, url.QueryEscape(secret), base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
			if !strings.Contains(err.Error(), tt.code) {
				t.Errorf("the need does not say what the issuer answered (%s): %v", tt.code, err)
			}
			if strings.Contains(e.logs.String(), secret) {
				t.Errorf("the log shows the secret:\n%s", e.logs)
			}
			other := e.session(f, Config{ClientID: id, ClientSecret: secret})
			if sr, err := other.NeedsSignIn(context.Background()); sr == nil || err != nil || !strings.Contains(sr.Reason, "refused the refresh token") {
				t.Errorf("another process: NeedsSignIn %v, %v; want the refusal stored", sr, err)
			}
		})
	}
}

// A sign-in whose code the token endpoint refuses with invalid_client, for
// a client registered earlier (the server forgot it), forgets the
// registration, so that the next sign-in registers again; also when the
// issuer's error_description echoes the registered client's secret.
func TestForgottenRegistrationEchoingTheSecret(t *testing.T) {
	f := oauthtest.New(t)
	f.AuthMethods = []string{"client_secret_basic"} // the registration gets a secret
	e := newEnv(t)
	s := e.session(f, Config{})
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	f.Set(func(f *oauthtest.Server) { f.EchoErrors, f.ClientID = true, "a-client-it-knows" })
	_, err := signIn(t, s)
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("sign-in with a registration the server forgot: %v", err)
	}
	mustNotHold(t, err, f.Secrets()...)
	f.Set(func(f *oauthtest.Server) { f.EchoErrors, f.ClientID = false, "" })
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	if regs, _, _, _ := f.Snapshot(); regs != 2 {
		t.Errorf("%d registrations, want 2: the refused registration was not forgotten", regs)
	}
}

// A process refreshing a grant another process stored (it rotated the
// refresh token since this one last read it) scrubs that refresh token
// from what the token endpoint answers: the token is in the scrubber
// before it is sent, as every token is.
func TestRefreshOfAnotherProcessesTokenIsScrubbed(t *testing.T) {
	f, e, a := signedIn(t, Config{}, rotating)
	b := e.session(f, Config{Scrubber: scrub.New()}) // another process
	e.clock.Advance(2 * time.Hour)
	if status, err := call(t, b, f); status != 200 || err != nil {
		t.Fatalf("the other process's call: %d, %v", status, err)
	}
	f.Set(func(f *oauthtest.Server) { f.EchoErrors = true })
	f.RevokeAll()
	e.clock.Advance(2 * time.Hour)
	_, err := call(t, a, f)
	mustSignInRequired(t, err, "refused the refresh token")
	tokens := issuedTokens(f)
	mustNotHold(t, err, tokens...)
	for _, tok := range tokens {
		if strings.Contains(e.logs.String(), tok) {
			t.Errorf("the log shows %q", tok)
		}
	}
}

// A registration whose client_id or client_secret is larger than any
// issuer sends is refused, naming the field; the next sign-in registers
// again.
func TestRegistrationOfHugeCredentialsIsRefused(t *testing.T) {
	for _, field := range []string{"client_id", "client_secret"} {
		t.Run(field, func(t *testing.T) {
			f := oauthtest.New(t)
			f.AuthMethods = []string{"client_secret_basic"} // the registration gets a secret
			f.RegisterAnswer = map[string]any{field: strings.Repeat("x", maxClientCredential+1)}
			e := newEnv(t)
			s := e.session(f, Config{})
			a, err := s.BeginSignIn(context.Background())
			if a != nil {
				a.Close()
			}
			if err == nil || !strings.Contains(err.Error(), field+" of 4097 bytes") {
				t.Fatalf("sign-in with a %s of 4097 bytes: %v", field, err)
			}
			f.Set(func(f *oauthtest.Server) { f.RegisterAnswer = nil })
			if _, err := signIn(t, s); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The scopes a server names (scopes_supported, a token answer's scope) are
// bounded in count and length, with a warning: they are logged and sent
// in the authorization URL.
func TestServerScopesAreBounded(t *testing.T) {
	var many []string
	for i := range 3 * maxScopes {
		many = append(many, fmt.Sprintf("scope-%d", i))
	}
	long := strings.Repeat("s", maxScopeBytes+1)
	f := oauthtest.New(t)
	f.PRMScopes = append([]string{long}, many...)
	f.AnswerScope = strings.Join(append(many, long), " ")
	e := newEnv(t)
	s := e.session(f, Config{})
	_, _ = call(t, s, f)
	if _, err := signIn(t, s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(f.LastAuthorize().Get("scope")); !slices.Equal(got, many[:maxScopes]) {
		t.Errorf("asked for %d scopes (%.80q…), want the first %d of scopes_supported but the long one", len(got), got, maxScopes)
	}
	s.mu.Lock()
	granted := s.cur.Scopes
	s.mu.Unlock()
	if !slices.Equal(granted, many[:maxScopes]) {
		t.Errorf("kept %d granted scopes, want the first %d but the long one", len(granted), maxScopes)
	}
	for _, what := range []string{"the scopes to ask for", "the token endpoint's answer"} {
		if !strings.Contains(e.logs.String(), "dropped scopes beyond the bound: "+what) {
			t.Errorf("no warning about %s:\n%s", what, e.logs)
		}
	}
	if l := len(e.logs.String()); l > 64<<10 {
		t.Errorf("%d bytes of log", l)
	}
}

// A registration whose client_secret_expires_at is beyond any date (as
// a number too large for seconds since 1970) is one that does not
// expire: the next sign-in reuses it rather than registering again.
func TestAFarClientSecretExpiryIsNotPast(t *testing.T) {
	for _, at := range []float64{1e19, 9.2e18, 1e300} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			f := oauthtest.New(t)
			f.AuthMethods = []string{"client_secret_basic"} // the registration gets a secret
			f.RegisterAnswer = map[string]any{"client_secret_expires_at": at}
			e := newEnv(t)
			s := e.session(f, Config{})
			for range 2 {
				if _, err := signIn(t, s); err != nil {
					t.Fatal(err)
				}
			}
			if regs, _, _, _ := f.Snapshot(); regs != 1 {
				t.Errorf("two sign-ins registered %d clients; want 1 (the secret does not expire)", regs)
			}
		})
	}
}

// A registration whose answer gives the client an authentication method
// this client cannot use (a private_key_jwt without a key, a TLS client
// certificate) is refused at once, naming the method, and not kept: the
// sign-in does not go to the browser only to fail at the code's exchange,
// nor does every later sign-in reuse it.
func TestRegistrationWithAnUnusableAuthMethodIsRefused(t *testing.T) {
	for _, method := range []string{"private_key_jwt", "tls_client_auth"} {
		t.Run(method, func(t *testing.T) {
			f := oauthtest.New(t)
			f.AuthMethods = []string{"client_secret_basic"} // the registration gets a secret
			f.RegisterAnswer = map[string]any{"token_endpoint_auth_method": method}
			e := newEnv(t)
			s := e.session(f, Config{})
			a, err := s.BeginSignIn(context.Background())
			if a != nil {
				a.Close()
			}
			if err == nil || !strings.Contains(err.Error(), method) {
				t.Fatalf("sign-in with a registration for %s: %v; want it refused, naming the method", method, err)
			}
			f.Set(func(f *oauthtest.Server) { f.RegisterAnswer = nil })
			if _, err := signIn(t, s); err != nil {
				t.Fatal(err)
			}
		})
	}
}
