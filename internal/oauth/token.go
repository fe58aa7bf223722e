package oauth

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// Token endpoint authentication methods (RFC 7591 section 2, RFC 7523).
const (
	authNone       = "none"
	authBasic      = "client_secret_basic"
	authPost       = "client_secret_post"
	authPrivateJWT = "private_key_jwt"
)

// Grants.
const (
	// GrantAuthorizationCode is a person signing in through a browser.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials is a machine-to-machine client: no person
	// signs in.
	GrantClientCredentials = "client_credentials"
	// GrantTokenExchange trades the person's own access token at the
	// team's issuer for one of the server (RFC 8693, Session.Exchange):
	// no sign-in, while the person's request is at hand.
	GrantTokenExchange = "token_exchange"
)

// Tokens is a token endpoint's successful answer.
type Tokens struct {
	AccessToken, RefreshToken string
	// IDToken is OpenID Connect's ID token, when the answer has one.
	IDToken string
	// Expiry is when the access token expires; zero when the answer did
	// not say (it is then used until the server refuses it).
	Expiry time.Time
	// Scopes are the scopes granted, when the answer said.
	Scopes []string
}

// clientAuth is how the client authenticates at the token endpoint.
type clientAuth struct {
	id, secret string
	method     string
	// key signs private_key_jwt assertions, whose audience is the
	// authorization server's issuer (or, without one, the token endpoint).
	key      crypto.Signer
	audience string
	// assertions holds the last assertions signed with key in the
	// scrubber (one per token request: replaced, not added to; see
	// scrub.Slot). It is set wherever key is.
	assertions *scrub.Slot
	// regID is the id of the stored registration it came from ("" for a
	// configured client or a client ID metadata document): the grant
	// keeps such a client's secret, not the configuration's.
	regID string
}

// chooseAuthMethod picks the token endpoint authentication of a client
// with (or without) a secret among those the server supports (RFC 8414's
// default when it lists none: client_secret_basic).
func chooseAuthMethod(supported []string, hasSecret bool) string {
	if !hasSecret {
		return authNone
	}
	switch {
	case len(supported) == 0 || slices.Contains(supported, authBasic):
		return authBasic
	case slices.Contains(supported, authPost):
		return authPost
	case slices.Contains(supported, authNone):
		return authNone
	}
	return authBasic
}

// tokenForm is a token request of grantType for resource, asking for
// scopes, with the other fields of pairs (see set).
func tokenForm(grantType, resource string, scopes []string, pairs ...string) url.Values {
	return set(url.Values{}, append(pairs, "grant_type", grantType, "resource", resource, "scope", strings.Join(scopes, " "))...)
}

// set sets in v the fields of pairs (a name, then its value), but for
// those whose value is "", and returns v.
func set(v url.Values, pairs ...string) url.Values {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	return v
}

// requestTokens posts a token request (form, with the client's
// authentication added) to endpoint and reads the answer. The caller puts
// the tokens in a scrub.Slot (each holder replaces its own) before it uses
// them; sc scrubs the errors. An error answer
// is an *oauthError holding only its code and description.
func (f *Fetcher) requestTokens(ctx context.Context, endpoint string, form url.Values, auth clientAuth, sc *scrub.Scrubber, now time.Time) (Tokens, error) {
	status, header, body, err := f.postForm(ctx, endpoint, "token request to", form, auth, sc, now)
	if err != nil {
		return Tokens{}, err
	}
	if status/100 != 2 {
		return Tokens{}, newOAuthError("the token endpoint", status, body, sc)
	}
	return parseTokens(body, header.Get("Content-Type"), now)
}

// ClientCredentials asks endpoint for an access token by the client
// credentials grant (RFC 6749 section 4.4) as the client id, authenticated
// with secret by client_secret_basic, for scopes (none: the server's
// default), at now. The caller puts the tokens in a scrub.Slot before it
// uses them; an error holds only the endpoint's error code and
// description of its answer, scrubbed by sc.
func (f *Fetcher) ClientCredentials(ctx context.Context, endpoint, id, secret string, scopes []string, sc *scrub.Scrubber, now time.Time) (Tokens, error) {
	auth := clientAuth{id: id, secret: secret, method: authBasic}
	return f.requestTokens(ctx, endpoint, tokenForm(GrantClientCredentials, "", scopes), auth, sc, now)
}

// postForm posts form to an endpoint of the authorization server, with the
// client's authentication (RFC 6749 section 2.3, RFC 7523), and returns
// the status, the headers and the bounded answer.
func (f *Fetcher) postForm(ctx context.Context, endpoint, what string, form url.Values, auth clientAuth, sc *scrub.Scrubber, now time.Time) (int, http.Header, []byte, error) {
	header := http.Header{}
	switch auth.method {
	case authBasic:
		header.Set("Authorization", "Basic "+ClientCredential(auth.id, auth.secret))
	case authPost:
		form.Set("client_id", auth.id)
		form.Set("client_secret", auth.secret)
	case authPrivateJWT:
		jwt, err := signAssertion(auth.key, auth.id, auth.audience, now)
		if err != nil {
			return 0, nil, nil, err
		}
		auth.assertions.Set(jwt)
		form.Set("client_id", auth.id)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	default: // none: a public client names itself ("" names none)
		set(form, "client_id", auth.id)
	}
	return f.send(ctx, http.MethodPost, endpoint, what+" "+redacted(endpoint), "application/x-www-form-urlencoded", []byte(form.Encode()), header)
}

// ClientCredential is the HTTP basic credential (after "Basic ") of
// client_secret_basic: RFC 6749 section 2.3.1 has the id and secret
// form-encoded first.
func ClientCredential(id, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret)))
}

// parseTokens reads a token endpoint's answer (RFC 6749 section 5.1) of
// contentType: a JSON object, or a form, which some endpoints send
// (GitHub's, unless asked for JSON).
func parseTokens(body []byte, contentType string, now time.Time) (Tokens, error) {
	var m map[string]any
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		q, _ := url.ParseQuery(string(body))
		m = map[string]any{}
		for k := range q {
			m[k] = q.Get(k)
		}
	} else if err := json.Unmarshal(body, &m); err != nil {
		return Tokens{}, fmt.Errorf("the token endpoint's answer is not a JSON object: %w", err)
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	t := Tokens{AccessToken: str("access_token"), RefreshToken: str("refresh_token"), IDToken: str("id_token")}
	switch {
	case t.AccessToken == "":
		return Tokens{}, errors.New("the token endpoint's answer has no access_token")
	case !headerSafe(t.AccessToken):
		return Tokens{}, errors.New("the access_token holds characters a header cannot carry")
	}
	for _, tok := range [...]struct{ name, text string }{{"access_token", t.AccessToken}, {"refresh_token", t.RefreshToken}, {"id_token", t.IDToken}} {
		if len(tok.text) > maxToken {
			return Tokens{}, fmt.Errorf("the %s is longer than %d KiB (%d KiB)", tok.name, maxToken>>10, len(tok.text)>>10)
		}
	}
	if typ := str("token_type"); typ != "" && !strings.EqualFold(typ, "bearer") {
		return Tokens{}, fmt.Errorf("token_type %q is not supported (only Bearer is)", clean(typ, 40))
	}
	if v := m["expires_in"]; v != nil {
		// A number, or (as some servers send it) a string; 0 says nothing.
		secs, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		if err != nil || secs < 0 {
			return Tokens{}, fmt.Errorf("expires_in %q is not a number of seconds", clean(fmt.Sprint(v), 40))
		}
		if secs > 0 {
			t.Expiry = now.Add(time.Duration(min(secs, 1e9) * float64(time.Second)))
		}
	}
	t.Scopes = strings.Fields(str("scope"))
	return t, nil
}

// into completes g with t, obtained at now: the access token and its
// expiry, the refresh token when one came, the scopes granted when the
// answer named them.
func (t Tokens) into(g *grant, now time.Time) {
	g.AccessToken, g.Obtained, g.Expiry = t.AccessToken, now, t.Expiry
	if t.RefreshToken != "" {
		g.RefreshToken = t.RefreshToken
	}
	if len(t.Scopes) > 0 {
		g.Scopes = t.Scopes
	}
}

// maxToken bounds each token of an answer (access, refresh, ID): each is
// kept in the scrubber in several forms, and the access token is sent as
// a header on every request. Servers take 8 KiB (nginx, Apache) to 16 KiB
// (Node, IIS, AWS load balancers) in a header by default; real tokens,
// JWTs with many claims, stay under 16 KiB.
const maxToken = 64 << 10

// headerSafe reports whether s can be sent in an HTTP header value: it
// holds no control character (C0 or DEL).
func headerSafe(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// isInvalidGrant reports whether err is the token endpoint saying the
// grant itself (the refresh token, the code) is no longer good, or that
// the client is no longer known: a person must sign in again. Other
// failures (the endpoint down, a 5xx) may pass.
func isInvalidGrant(err error) bool {
	var oe *oauthError
	if !errors.As(err, &oe) {
		return false
	}
	switch oe.code {
	case "invalid_grant", "invalid_client", "unauthorized_client":
		return true
	}
	return oe.status == http.StatusBadRequest && oe.code == ""
}
