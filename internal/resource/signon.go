package resource

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// An IDToken is what a verified OpenID Connect ID token says of the
// person who signed in.
type IDToken struct {
	Subject, Name, Email string
	Expiry               time.Time
}

// VerifyIDToken verifies an OpenID Connect ID token as OpenID Connect Core
// (section 3.1.3.7) says, with the checks access tokens get where they
// are the same: signed with one of the issuer's published keys under an
// accepted algorithm, iss the issuer, aud naming clientID (and azp
// clientID when it names several), exp in the future (within Skew), a
// sub, and nonce the sign-in's own (compared in constant time). The error
// wraps ErrInvalid and says why in fixed words.
func (v *Validator) VerifyIDToken(ctx context.Context, raw, clientID, nonce string) (IDToken, error) {
	if len(raw) > MaxTokenLen {
		return IDToken{}, fmt.Errorf("%w: the ID token is over %d bytes", ErrInvalid, MaxTokenLen)
	}
	h, ok := jws.Parse(raw)
	if !ok {
		return IDToken{}, fmt.Errorf("%w: the ID token is not a signed JWT", ErrInvalid)
	}
	var c idClaims
	if err := v.verify(ctx, raw, h, "ID token", &c); err != nil {
		return IDToken{}, err
	}
	if err := v.checkIdentity(&c, "ID token", true); err != nil {
		return IDToken{}, err
	}
	switch {
	case !slices.Contains(c.Audience, clientID):
		return IDToken{}, fmt.Errorf("%w: the ID token is for another client (its aud does not name server.auth.console.client_id)", ErrInvalid)
	case len(c.Audience) > 1 && c.Azp != clientID:
		return IDToken{}, fmt.Errorf("%w: the ID token names several audiences and its azp is not this client", ErrInvalid)
	case nonce == "" || subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(nonce)) != 1:
		return IDToken{}, fmt.Errorf("%w: the ID token's nonce is not this sign-in's", ErrInvalid)
	}
	return IDToken{Subject: c.Subject, Name: bounded(cmp.Or(c.Name, c.Username)), Email: bounded(c.Email), Expiry: c.Exp.time()}, nil
}

// SignOnConfig configures a SignOn.
type SignOnConfig struct {
	// ClientID is the client registered at the issuer for the console;
	// ClientSecret its secret ("" for a public client).
	ClientID, ClientSecret string
	// RedirectURI is where the issuer sends the browser back (the
	// console's /auth/callback).
	RedirectURI string
	// Scopes are asked for; "openid" is added when missing.
	Scopes []string
	// Resource is the MCP endpoint's resource identifier, sent as RFC
	// 8707's resource (the audience is sent too, as the audience
	// parameter some issuers take instead, Ory Hydra's and Auth0's).
	Resource string
}

// A SignOn signs a person in to the approval console through the issuer
// (OpenID Connect's authorization code flow with PKCE): the console keeps
// each attempt's state, nonce and verifier, and the browser's session.
// The tokens it obtains are checked by the Validator that checks the MCP
// endpoint's: the ID token with VerifyIDToken, the access token with
// Validate, so a person is who they would be on the MCP endpoint, with the
// same scopes, groups and roles. It is safe for concurrent use.
type SignOn struct {
	v   *Validator
	cfg SignOnConfig
}

// SignOn returns the console's sign-on through v's issuer.
func (v *Validator) SignOn(cfg SignOnConfig) (*SignOn, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("resource: the console's sign-on needs a client id")
	}
	if err := oauth.CheckURL(cfg.RedirectURI, "the console's redirect URI"); err != nil {
		return nil, err
	}
	if !slices.Contains(cfg.Scopes, "openid") {
		cfg.Scopes = append([]string{"openid"}, cfg.Scopes...)
	}
	return &SignOn{v: v, cfg: cfg}, nil
}

// AuthorizationURL is the issuer's authorization request for one sign-in:
// response_type code, this client and redirect URI, the scopes, state,
// nonce, PKCE's S256 challenge of verifier, the resource and the
// audience. It refuses an issuer that does not say it supports PKCE with
// S256.
func (s *SignOn) AuthorizationURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	meta, err := s.v.metadata(ctx, KeysMaxAge)
	if err != nil {
		return "", err
	}
	switch {
	case meta.AuthorizationEndpoint == "":
		return "", fmt.Errorf("the issuer's metadata (%s) names no authorization endpoint", meta.Where)
	case !meta.SupportsS256():
		return "", fmt.Errorf("the issuer's metadata (%s) does not say it supports PKCE with S256 (code_challenge_methods_supported); refusing to sign in through it", meta.Where)
	}
	return oauth.AuthorizationURL(meta.AuthorizationEndpoint, s.cfg.ClientID, s.cfg.RedirectURI, state, verifier,
		append(s.audience(), "scope", strings.Join(s.cfg.Scopes, " "), "nonce", nonce)...)
}

// audience names the tokens' audience in a request (as the fields of
// oauth's pairs): RFC 8707's resource, and the audience parameter.
func (s *SignOn) audience() []string {
	return []string{"resource", s.cfg.Resource, "audience", s.v.cfg.Audience}
}

// SignIn completes a sign-in from the redirect back (its query q), for the
// attempt that sent nonce and verifier (the caller checked its state): it
// checks the issuer's error and iss (RFC 9207), exchanges the code, and
// verifies the ID token (nonce included) and the access token. It returns
// who signed in, as the MCP endpoint would see them (the access token's
// principal, with the ID token's name and email where the access token
// has none), and when the access token expires (else the ID token). The
// error of a sign-in the issuer or its answer refused (the person
// declined, the redirect names another issuer, the code was not taken, a
// token is not good: the person must sign in again) wraps
// codemode.ErrNotAllowed, so that surfaces tell it from a failure to
// reach the issuer by codemode.IsRefusal.
func (s *SignOn) SignIn(ctx context.Context, q url.Values, nonce, verifier string) (*codemode.Principal, time.Time, error) {
	refused := func(format string, a ...any) (*codemode.Principal, time.Time, error) {
		return nil, time.Time{}, &refusal{fmt.Errorf("sign-in refused: "+format, a...)}
	}
	meta, err := s.v.metadata(ctx, KeysMaxAge)
	if err != nil {
		return nil, time.Time{}, err
	}
	code, err := oauth.RedirectCode(q, *meta)
	if err != nil {
		return refused("%v", err)
	}
	t, err := s.v.fetch.RedeemCode(ctx, *meta, code, verifier, s.cfg.RedirectURI, s.cfg.ClientID, s.cfg.ClientSecret, s.audience()...)
	if err != nil {
		if oauth.IsOAuthError(err) {
			return refused("%v", err)
		}
		return nil, time.Time{}, err
	}
	if t.IDToken == "" {
		return refused("the issuer sent no ID token (is openid among the client's scopes?)")
	}
	id, err := s.v.VerifyIDToken(ctx, t.IDToken, s.cfg.ClientID, nonce)
	switch {
	case errors.Is(err, ErrInvalid): // (its reason names the ID token; ErrInvalid's words are the access token's)
		return refused("%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	case err != nil: // the issuer's keys could not be fetched: not the person's doing
		return nil, time.Time{}, err
	}
	p, err := s.v.Validate(ctx, t.AccessToken)
	switch {
	case errors.Is(err, ErrInvalid):
		return refused("%v", err)
	case err != nil:
		return nil, time.Time{}, err
	case p.Subject != id.Subject:
		return refused("the access token and the ID token name different people")
	}
	// (Validate's principal is this call's own copy.)
	p.Token = "" // the session keeps no token
	if p.Name == "" && p.Email == "" {
		p.Name, p.Email = id.Name, id.Email
	}
	return p, cmp.Or(t.Expiry, id.Expiry), nil
}

// A refusal is SignIn's error for a sign-in refused: its text, and
// codemode.ErrNotAllowed.
type refusal struct{ err error }

func (r *refusal) Error() string   { return r.err.Error() }
func (r *refusal) Unwrap() []error { return []error{r.err, codemode.ErrNotAllowed} }
