package resource_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
