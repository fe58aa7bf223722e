package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
)

// A server's first 401 is a sign-in to wait for only when a person could
// make it: a server that publishes no OAuth, or whose authorization
// server gives this client no identity or no PKCE, makes the request
// fail with ErrNoSignIn, and nothing waits for a sign-in (NeedsSignIn
// says none is needed); a sign-in asked for all the same (login) fails
// saying why, before registering a client.
func TestFirstRefusalNeedsAUsableSignIn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		set    func(*oauthtest.Server)
		cfg    Config
		signIn bool   // a SignInRequired, else ErrNoSignIn
		says   string // in the ErrNoSignIn's message
	}{
		{"OAuth metadata", func(*oauthtest.Server) {}, Config{}, true, ""},
		{"no metadata, a static token wanted", func(f *oauthtest.Server) { f.NoPRM, f.NoMetadata = true, true }, Config{},
			false, "publishes no OAuth metadata"},
		{"2025-03-26: default endpoints that answer", func(f *oauthtest.Server) { f.NoPRM, f.ASOnRS, f.NoMetadata = true, true, true }, Config{}, true, ""},
		{"no registration endpoint", func(f *oauthtest.Server) { f.NoRegistration = true }, Config{},
			false, "offers no dynamic client registration; configure oauth.client_id"},
		{"no registration endpoint, a client configured", func(f *oauthtest.Server) { f.NoRegistration = true }, Config{ClientID: "pre-registered"}, true, ""},
		{"no PKCE", func(f *oauthtest.Server) { f.NoPKCE = true }, Config{}, false, "PKCE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := oauthtest.New(t)
			tt.set(f)
			e := newEnv(t)
			s := e.session(f, tt.cfg)
			_, err := call(t, s, f)
			_, signIn := connectors.AsSignInRequired(err)
			switch {
			case tt.signIn && !signIn:
				t.Fatalf("call: %v, want a SignInRequired", err)
			case tt.signIn:
				return
			case signIn || !errors.Is(err, ErrNoSignIn) || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "the server said: invalid_token"):
				t.Fatalf("call: %v, want ErrNoSignIn saying %q and what the server said", err, tt.says)
			}
			if sr, err := s.NeedsSignIn(context.Background()); sr != nil || err != nil {
				t.Errorf("NeedsSignIn = %v, %v after ErrNoSignIn, want none", sr, err)
			}
			if _, err := s.BeginSignIn(context.Background()); !errors.Is(err, ErrNoSignIn) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("BeginSignIn: %v, want ErrNoSignIn saying %q", err, tt.says)
			}
			if regs, _, _, authorizes := f.Snapshot(); regs+authorizes+f.HitsOf("/register") != 0 {
				t.Errorf("%d registrations and %d authorization requests", regs+f.HitsOf("/register"), authorizes)
			}
		})
	}
}

// What the 401 says of why (its error_description) is in the error,
// bounded, on one line, with the session's secrets scrubbed out.
func TestFirstRefusalQuotesTheServer(t *testing.T) {
	const secret = "sk-live-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="x", error="invalid_token", error_description="the token `+secret+` is not valid here`+strings.Repeat("!", 2000)+`"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t)
	e.scrub.Add(secret)
	s := e.session(nil, Config{Server: srv.URL + "/mcp"})
	c := &http.Client{Transport: s.Transport(http.DefaultTransport)}
	resp, err := c.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("status %d, want ErrNoSignIn", resp.StatusCode)
	}
	msg := err.Error()
	if !errors.Is(err, ErrNoSignIn) || !strings.Contains(msg, "invalid_token: the token") || strings.Contains(msg, secret) || len(msg) > 1000 {
		t.Fatalf("error (%d bytes): %v\nwant ErrNoSignIn quoting the server, bounded, without the secret", len(msg), err)
	}
}

func TestRefusal(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   string
	}{
		{nil, ""},
		{[]string{`Bearer`}, ""},
		{[]string{`Bearer error="invalid_token"`}, "invalid_token"},
		{[]string{`Bearer error_description="expired"`}, "expired"},
		{[]string{`Basic realm="x"`}, "it asks for Basic authentication"},
		{[]string{`Basic realm="x"`, "Bearer error=\"invalid_token\", error_description=\"bad\ttoken\""}, "invalid_token: bad token"},
	} {
		if got := Refusal(tt.values); got != tt.want {
			t.Errorf("Refusal(%q) = %q, want %q", tt.values, got, tt.want)
		}
	}
}
