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
// issuer lists only that), without one as a public client. pairs add
// form fields (see set: resource, audience). The tokens are scrubbed
// from every error, and none is logged.
func (f *Fetcher) RedeemCode(ctx context.Context, meta IssuerMetadata, code, verifier, redirect, id, secret string, pairs ...string) (Tokens, error) {
	if meta.TokenEndpoint == "" {
		return Tokens{}, fmt.Errorf("the issuer's metadata (%s) names no token endpoint", meta.Where)
	}
	sc := scrub.New(code, verifier, secret)
	form := tokenForm(GrantAuthorizationCode, "", nil, append(pairs, "code", code, "redirect_uri", redirect, "code_verifier", verifier)...)
	auth := clientAuth{id: id, secret: secret, method: chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, secret != "")}
	t, err := f.requestTokens(ctx, meta.TokenEndpoint, form, auth, sc, time.Now())
	if err != nil {
		return Tokens{}, sc.Error(fmt.Errorf("exchanging the code: %w", err))
	}
	return t, nil
}

// IsOAuthError reports whether err is an authorization server's answer
// refusing a request (an OAuth error, such as invalid_grant for a code
// already used), not a failure to reach it.
func IsOAuthError(err error) bool {
	var oe *oauthError
	return errors.As(err, &oe)
}

// AuthorizationURL is the authorization request of a sign-in (RFC 6749
// section 4.1.1) at endpoint: response_type code, the client and its
// redirect URI, state, PKCE's S256 challenge of verifier (RFC 7636), and
// the other fields of pairs (see set: scope, resource, nonce, audience).
func AuthorizationURL(endpoint, clientID, redirect, state, verifier string, pairs ...string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("the authorization endpoint: %w", err)
	}
	challenge := sha256.Sum256([]byte(verifier))
	u.RawQuery = set(u.Query(), append([]string{"response_type", "code", "client_id", clientID, "redirect_uri", redirect,
		"code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:]), "code_challenge_method", "S256", "state", state}, pairs...)...).Encode()
	return u.String(), nil
}

// RedirectCode reads the authorization server's redirect back (its query
// q, whose state the caller checked) from a sign-in sent to the server of
// meta: the error it answered, else its code, once its iss is checked
// (RFC 9207: present when the metadata says it is sent, and naming
// meta's issuer when present). The error says why the redirect is
// refused.
func RedirectCode(q url.Values, meta IssuerMetadata) (string, error) {
	if e := q.Get("error"); e != "" {
		msg := "the authorization server answered " + clean(e, 64)
		if desc := q.Get("error_description"); desc != "" {
			msg += ": " + clean(desc, maxErrorText)
		}
		return "", errors.New(msg)
	}
	switch iss := q.Get("iss"); {
	case iss == "" && meta.AuthorizationResponseIssParameterSupported:
		return "", errors.New("the redirect has no iss, which the authorization server says it sends (RFC 9207); refusing it")
	case iss != "" && meta.Issuer != "" && iss != meta.Issuer:
		return "", fmt.Errorf("the redirect names another issuer, %q, not %q, the authorization server this sign-in went to (RFC 9207); refusing it", clip(iss), redacted(meta.Issuer))
	}
	code := q.Get("code")
	if code == "" {
		return "", errors.New("the redirect has no code")
	}
	return code, nil
}
