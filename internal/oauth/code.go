package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// CodeTokens is what an issuer's token endpoint answered an authorization
// code with.
type CodeTokens struct {
	// AccessToken and IDToken (OpenID Connect's, "" when none came).
	AccessToken, IDToken string
	// Expiry is when the access token expires (zero: the answer did not
	// say).
	Expiry time.Time
}

// CodeChallenge is PKCE's S256 challenge of verifier (RFC 7636).
func CodeChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// randomString returns n random bytes in base64url: a PKCE verifier, a
// state, a jti, a lease holder's name.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SupportsS256 reports whether the issuer says it takes PKCE with S256.
func (m IssuerMetadata) SupportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}

// RedeemCode exchanges an authorization code at the issuer's token
// endpoint (RFC 6749 section 4.1.3, with PKCE's verifier), as the client
// id: with secret by client_secret_basic (or client_secret_post when the
// issuer lists only that), without one as a public client. extra adds
// form fields (resource, audience). The tokens are scrubbed from every
// error, and none is logged.
func (f *Fetcher) RedeemCode(ctx context.Context, meta IssuerMetadata, code, verifier, redirect, id, secret string, extra url.Values) (CodeTokens, error) {
	if meta.TokenEndpoint == "" {
		return CodeTokens{}, fmt.Errorf("the issuer's metadata (%s) names no token endpoint", meta.Where)
	}
	sc := scrub.New(code, verifier, secret)
	form := tokenForm(GrantAuthorizationCode, "", nil, "code", code, "redirect_uri", redirect, "code_verifier", verifier)
	for k, vs := range extra {
		form[k] = vs
	}
	auth := clientAuth{id: id, secret: secret, method: chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, secret != "")}
	t, err := f.f.requestTokens(ctx, meta.TokenEndpoint, form, auth, sc, time.Now())
	if err != nil {
		return CodeTokens{}, sc.Error(fmt.Errorf("exchanging the code: %w", err))
	}
	return CodeTokens{AccessToken: t.access, IDToken: t.idToken, Expiry: t.expiry}, nil
}

// IsOAuthError reports whether err is an authorization server's answer
// refusing a request (an OAuth error, such as invalid_grant for a code
// already used), not a failure to reach it.
func IsOAuthError(err error) bool {
	var oe *oauthError
	return errors.As(err, &oe)
}
