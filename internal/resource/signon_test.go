package resource_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/resource"
)

// An ID token is verified with the keys and checks of access tokens and
// those of OpenID Connect: it names the person only when signed by the
// issuer's published key, iss the issuer, aud the client (azp the client
// when it names several), unexpired, with a sub and the sign-in's nonce.
func TestVerifyIDToken(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	good := map[string]any{"aud": "console", "nonce": "n-1", "sub": "bob", "name": "Bob", "email": "bob@example.com"}
	with := func(change map[string]any) string {
		c := map[string]any{}
		for k, val := range good {
			c[k] = val
		}
		for k, val := range change {
			c[k] = val
		}
		return as.SignJWT("RS256", c)
	}
	id, err := v.VerifyIDToken(context.Background(), with(nil), "console", "n-1")
	if err != nil || id.Subject != "bob" || id.Name != "Bob" || id.Email != "bob@example.com" || !id.Expiry.After(time.Now()) {
		t.Fatalf("a good ID token: %+v, %v", id, err)
	}
	other := oauthtest.NewKey(as.CurrentKey().Kid)
	for _, tc := range []struct {
		name, token, want string
	}{
		{"another nonce", with(map[string]any{"nonce": "n-2"}), "nonce is not this sign-in's"},
		{"no nonce", with(map[string]any{"nonce": nil}), "nonce is not this sign-in's"},
		{"another client", with(map[string]any{"aud": "someone-else"}), "for another client"},
		{"several audiences, azp another", with(map[string]any{"aud": []string{"console", "x"}, "azp": "x"}), "azp is not this client"},
		{"another issuer", with(map[string]any{"iss": "https://evil.example"}), "issued by another authorization server"},
		{"expired", with(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}), "has expired"},
		{"no sub", with(map[string]any{"sub": nil}), "no sub"},
		{"unsigned", oauthtest.Sign(nil, "none", map[string]any{"iss": as.Issuer(), "aud": "console", "nonce": "n-1", "sub": "bob", "exp": time.Now().Add(time.Hour).Unix()}), "algorithm"},
		{"signed by another key", oauthtest.Sign(other, "RS256", map[string]any{"iss": as.Issuer(), "aud": "console", "nonce": "n-1", "sub": "bob", "exp": time.Now().Add(time.Hour).Unix()}), "signature"},
		{"not a JWT", "opaque-token", "not a signed JWT"},
	} {
		_, err := v.VerifyIDToken(context.Background(), tc.token, "console", "n-1")
		if !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrInvalid saying %q", tc.name, err, tc.want)
		}
	}
}

// signIn runs the console's sign-in through as's authorization endpoint
// up to the redirect back, and returns SignIn's outcome.
func signIn(t *testing.T, v *resource.Validator) (*codemode.Principal, error) {
	t.Helper()
	so, err := v.SignOn(resource.SignOnConfig{ClientID: "console", ClientSecret: "console-secret", RedirectURI: "https://console.example/auth/callback", Resource: "https://mcp.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, err := so.AuthorizationURL(ctx, "st-1", "n-1", "verifier-0123456789-0123456789-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		t.Fatalf("the authorization endpoint's redirect %q: %v", resp.Header.Get("Location"), err)
	}
	p, _, err := so.SignIn(ctx, back.Query(), "n-1", "verifier-0123456789-0123456789-0123456789")
	return p, err
}

// A sign-in refused for its ID token says it is the ID token that is
// not good (not "invalid access token"); one whose ID token cannot be
// checked because the issuer's keys cannot be fetched is not a refusal
// (the console answers 502 and counts nothing against the person).
func TestSignInRefusalsNameTheIDToken(t *testing.T) {
	as := oauthtest.New(t)
	as.JWTAccess, as.ClientID, as.ClientSecret = true, "console", "console-secret"
	as.JWKSDown = true
	v, clk := newValidator(t, as, func(c *resource.Config) { c.Audience = "https://mcp.example/mcp" })
	if _, err := signIn(t, v); err == nil || codemode.IsRefusal(err) || errors.Is(err, resource.ErrInvalid) {
		t.Errorf("the issuer's keys cannot be fetched: %v; want an error that is not a refusal", err)
	}
	clk.advance(resource.RefetchInterval)
	as.Set(func(s *oauthtest.Server) { s.JWKSDown, s.IDTokenClaims = false, map[string]any{"nonce": "another"} })
	_, err := signIn(t, v)
	if !codemode.IsRefusal(err) || !strings.Contains(err.Error(), "the ID token's nonce") || strings.Contains(err.Error(), "access token") {
		t.Errorf("an ID token with another nonce: %v; want a refusal naming the ID token, not the access token", err)
	}
	as.Set(func(s *oauthtest.Server) { s.IDTokenClaims = nil })
	if p, err := signIn(t, v); err != nil || p.Subject != "alice" {
		t.Errorf("a good sign-in: %+v, %v", p, err)
	}
}
