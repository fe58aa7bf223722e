// Package oauthtest is an OAuth authorization server and a protected
// resource on real HTTP servers on 127.0.0.1, for tests: its fields make
// it behave as the specifications say, or misbehave (a resource that is
// not the server, an iss of another server, refresh tokens that rotate and
// detect reuse, scopes never granted, huge or hanging answers), and it
// records what it saw. The resource's /mcp passes requests with a good
// token to Next (an MCP server), so a connector can be tested end to end.
package oauthtest

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/jws"
)

// Server is an authorization server and a protected resource (an "MCP
// endpoint" at /mcp that wants a Bearer token) on two real HTTP servers
// on 127.0.0.1. Its fields set how it behaves, and misbehaves; what it
// saw is recorded for the test to check.
type Server struct {
	// AS is the authorization server, RS the protected resource.
	AS, RS *httptest.Server
	// Next answers the requests that carry a good token, to any path but
	// the metadata's (nil: only /mcp is served, with an echo of the
	// request).
	Next http.Handler

	// Behaviour, set before use.
	IssuerPath      string   // the issuer's path ("" or "/tenant1")
	OpenID          bool     // metadata only at OpenID Connect's well-known URL
	NoMetadata      bool     // no authorization server metadata at all
	NoPRM           bool     // no protected resource metadata
	PRMInHeader     bool     // the 401 names the metadata URL
	PRMPath         string   // where the protected resource metadata is ("" default)
	PRMResource     string   // the metadata's resource ("" the server's URL)
	PRMScopes       []string // its scopes_supported
	ChallengeScope  string   // scope="" in the 401
	ASScopes        []string // the server's scopes_supported
	AuthMethods     []string // token_endpoint_auth_methods_supported (nil: none listed)
	NoRegistration  bool
	RegisterAnswer  map[string]any // fields set in the registration's answer
	CIMD            bool           // client_id_metadata_document_supported
	NoPKCE          bool           // no code_challenge_methods_supported
	IssParam        bool           // authorization_response_iss_parameter_supported, and iss sent
	RedirectIss     string         // iss sent on the redirect (overrides the real one)
	NoRedirectIss   bool           // iss never sent on the redirect
	ExpiresIn       int            // seconds; 0 sends none
	AnswerScope     string         // the scope of the token answers ("": the scopes granted)
	Rotate          bool           // refresh tokens rotate (a reused one revokes the family)
	NeedScopes      []string
	AlwaysForbidden bool // 403 insufficient_scope whatever the token
	ClientID        string
	ClientSecret    string
	ECKey           *ecdsa.PublicKey // verifies private_key_jwt assertions
	MetadataPad     int              // bytes of padding in the metadata (huge answers)
	HangToken       chan struct{}    // when set, the token endpoint waits for it
	ASOnRS          bool             // the authorization server is the resource server's origin
	DenyWith        string           // the authorization endpoint redirects with this error
	EchoErrors      bool             // the token endpoint's error descriptions echo the request's secrets
	JWKSDown        bool             // the JWK Set answers 503
	JWKSURI         string           // the metadata's jwks_uri ("": the server's own /jwks)
	// IntrospectClientID and IntrospectClientSecret, when set, are the
	// client the introspection endpoint wants (client_secret_basic).
	IntrospectClientID, IntrospectClientSecret string

	// OpenID Connect, for a relying party (the approval console).
	// Person is who signs in at the authorization endpoint: the claims
	// of the person (sub, name, email, groups, roles) that the tokens of
	// the code it issues carry (nil: sub "alice"). The test chooses the
	// person by setting it before the browser goes there.
	Person map[string]any
	// JWTAccess makes the token endpoint issue JWT access tokens (signed
	// by the current key: iss, the person's claims, aud the request's
	// audience else its resource, scope, client_id, exp) instead of
	// opaque ones.
	JWTAccess bool
	// IDTokenClaims and AccessTokenClaims override claims of the ID
	// tokens and JWT access tokens issued (a wrong nonce, another
	// audience); a nil value removes the claim.
	IDTokenClaims, AccessTokenClaims map[string]any

	mu         sync.Mutex
	codes      map[string]codeGrant
	access     map[string][]string // valid access tokens and their scopes
	subjects   map[string]string   // the person each access or refresh token is for ("" for none)
	calls      []Call              // the tools/call requests passed to Next
	refresh    map[string]*refreshToken
	refreshes  int
	reuses     int
	authorizes []url.Values
	tokenForms []url.Values
	tokenAuth  []string
	regBodies  []map[string]any
	assertions int
	seq        int
	mcpHits    int                       // requests to /mcp
	paths      map[string]int            // requests by path, on both servers
	secrets    []string                  // every token, code, secret it issued or saw
	key        *Key                      // the signing key (JWK Set), made on first use
	opaque     map[string]map[string]any // opaque tokens and their introspection
}

type codeGrant struct {
	challenge, redirect, clientID, resource string
	scopes                                  []string
	nonce, audience                         string
	person                                  map[string]any
	subject                                 string // SubjectParam's, else the person's sub
}

type refreshToken struct {
	family  string
	used    bool
	scopes  []string
	subject string
}

// SubjectParam is the query parameter a test adds to an authorization
// request's URL to sign in as that person (the fake has no login page):
// the tokens issued for the code are that person's, and the resource
// records their subject with each call (Calls).
const SubjectParam = "oauthtest_subject"

// A Call is a tools/call request the resource passed to Next: whose
// token it carried ("" for a token of nobody in particular) and the
// request's body.
type Call struct {
	Subject string
	Body    string
}

// New starts a Server that behaves: metadata where the specifications
// put it, the 401 naming it, registration, PKCE, tokens for an hour.
// Change its fields before the first request (or under Set). The servers
// stop when t ends.
func New(t testing.TB) *Server {
	f := &Server{PRMInHeader: true, ExpiresIn: 3600, codes: map[string]codeGrant{},
		access: map[string][]string{}, subjects: map[string]string{}, refresh: map[string]*refreshToken{}, paths: map[string]int{},
		opaque: map[string]map[string]any{}}
	f.AS = httptest.NewServer(http.HandlerFunc(f.serveAS))
	f.RS = httptest.NewServer(http.HandlerFunc(f.serveRS))
	t.Cleanup(f.AS.Close)
	t.Cleanup(f.RS.Close)
	return f
}

// locked returns get's answer with f.mu held.
func locked[T any](f *Server, get func() T) T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return get()
}

// Set changes the server's behaviour while it serves.
func (f *Server) Set(change func(*Server)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// Issuer is the authorization server's issuer identifier.
func (f *Server) Issuer() string {
	if f.ASOnRS {
		return f.RS.URL + f.IssuerPath
	}
	return f.AS.URL + f.IssuerPath
}

// ServerURL is the protected MCP endpoint's URL.
func (f *Server) ServerURL() string { return f.RS.URL + "/mcp" }
func (f *Server) prmLocation() string {
	return cmp.Or(f.PRMPath, "/.well-known/oauth-protected-resource/mcp")
}

// next makes a new secret value (a token, a code, a client secret) and
// remembers it.
func (f *Server) next(prefix string) string {
	v := f.id(prefix)
	f.secrets = append(f.secrets, v)
	return v
}

// id makes a new value that is no secret (a client id).
func (f *Server) id(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s-%d-%s", prefix, f.seq, strings.Repeat("x", 12))
}

// serveRS is the protected resource: /mcp wants a valid token (with
// needScopes), and the protected resource metadata.
func (f *Server) serveRS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.ASOnRS && r.URL.Path != "/mcp" && (f.NoPRM || r.URL.Path != f.prmLocation()) {
		f.mu.Unlock()
		f.serveAS(w, r)
		return
	}
	defer f.mu.Unlock()
	f.paths[r.URL.Path]++
	if r.URL.Path == f.prmLocation() && !f.NoPRM {
		res := cmp.Or(f.PRMResource, f.ServerURL())
		writeJSON(w, map[string]any{"resource": res, "authorization_servers": []string{f.Issuer()}, "scopes_supported": f.PRMScopes})
		return
	}
	if r.URL.Path != "/mcp" && f.Next == nil {
		http.NotFound(w, r)
		return
	}
	f.mcpHits++
	challenge := `Bearer error="invalid_token"`
	if f.PRMInHeader && !f.NoPRM {
		challenge += `, resource_metadata="` + f.RS.URL + f.prmLocation() + `"`
	}
	if f.ChallengeScope != "" {
		challenge += `, scope="` + f.ChallengeScope + `"`
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	scopes, valid := f.access[tok]
	if !ok || !valid {
		w.Header().Set("WWW-Authenticate", challenge)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if f.AlwaysForbidden || !covers(scopes, f.NeedScopes) {
		want := strings.Join(f.NeedScopes, " ")
		if f.AlwaysForbidden {
			want = f.ChallengeScope
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+want+`"`)
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if f.Next != nil {
		next := f.Next
		sub := f.subjects[tok]
		if r.Method == http.MethodPost && r.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			if strings.Contains(string(body), `"tools/call"`) {
				f.calls = append(f.calls, Call{Subject: sub, Body: string(body)})
			}
		}
		f.mu.Unlock()
		defer f.mu.Lock()
		next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	writeJSON(w, map[string]any{"ok": true, "echo": string(body)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Server) metadata() map[string]any {
	m := map[string]any{
		"issuer":                   f.Issuer(),
		"authorization_endpoint":   f.Issuer() + "/authorize",
		"token_endpoint":           f.Issuer() + "/token",
		"revocation_endpoint":      f.Issuer() + "/revoke",
		"jwks_uri":                 cmp.Or(f.JWKSURI, f.Issuer()+"/jwks"),
		"introspection_endpoint":   f.Issuer() + "/introspect",
		"response_types_supported": []string{"code"},
	}
	// What the fields add, when they are set.
	for _, o := range []struct {
		on    bool
		key   string
		value any
	}{
		{!f.NoRegistration, "registration_endpoint", f.Issuer() + "/register"},
		{!f.NoPKCE, "code_challenge_methods_supported", []string{"S256"}},
		{f.ASScopes != nil, "scopes_supported", f.ASScopes},
		{f.AuthMethods != nil, "token_endpoint_auth_methods_supported", f.AuthMethods},
		{f.CIMD, "client_id_metadata_document_supported", true},
		{f.IssParam, "authorization_response_iss_parameter_supported", true},
		{f.MetadataPad > 0, "padding", strings.Repeat("p", f.MetadataPad)},
	} {
		if o.on {
			m[o.key] = o.value
		}
	}
	return m
}

func (f *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	if hang := locked(f, func() chan struct{} { return f.HangToken }); hang != nil && r.URL.Path == f.IssuerPath+"/token" {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	f.paths[p]++
	wellKnownOAuth := "/.well-known/oauth-authorization-server" + f.IssuerPath
	wellKnownOIDC := "/.well-known/openid-configuration" + f.IssuerPath
	if f.IssuerPath != "" {
		wellKnownOIDC = f.IssuerPath + "/.well-known/openid-configuration"
	}
	switch {
	case !f.NoMetadata && !f.OpenID && p == wellKnownOAuth, !f.NoMetadata && f.OpenID && p == wellKnownOIDC:
		writeJSON(w, f.metadata())
	case p == f.IssuerPath+"/authorize":
		f.authorize(w, r)
	case p == f.IssuerPath+"/token":
		f.token(w, r)
	case p == f.IssuerPath+"/register" && !f.NoRegistration:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.regBodies = append(f.regBodies, body)
		out := map[string]any{"client_id": f.id("client"), "redirect_uris": body["redirect_uris"]}
		if m, _ := body["token_endpoint_auth_method"].(string); m != "none" {
			out["client_secret"] = f.next("client-secret")
			out["token_endpoint_auth_method"] = m
		}
		maps.Copy(out, f.RegisterAnswer)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, out)
	case p == f.IssuerPath+"/jwks" && f.JWKSDown:
		http.Error(w, "down", http.StatusServiceUnavailable)
	case p == f.IssuerPath+"/jwks":
		f.serveJWKS(w)
	case p == f.IssuerPath+"/introspect":
		f.introspect(w, r)
	case p == f.IssuerPath+"/revoke":
		_ = r.ParseForm()
		tok := r.PostForm.Get("token")
		if rt := f.refresh[tok]; rt != nil {
			f.revokeFamily(rt.family)
		}
		delete(f.access, tok)
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

func (f *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.authorizes = append(f.authorizes, q)
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE required", http.StatusBadRequest)
		return
	}
	code := f.next("code")
	f.codes[code] = codeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"),
		clientID: q.Get("client_id"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope")),
		nonce: q.Get("nonce"), audience: q.Get("audience"), person: f.Person, subject: q.Get(SubjectParam)}
	if c := f.codes[code]; c.subject == "" {
		c.subject, _ = f.Person["sub"].(string)
		f.codes[code] = c
	}
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	back := u.Query()
	back.Set("state", q.Get("state"))
	if f.DenyWith != "" {
		back.Set("error", f.DenyWith)
		back.Set("error_description", "the person said no")
	} else {
		back.Set("code", code)
	}
	switch {
	case f.RedirectIss != "":
		back.Set("iss", f.RedirectIss)
	case f.IssParam && !f.NoRedirectIss:
		back.Set("iss", f.Issuer())
	}
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (f *Server) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	form := r.PostForm
	f.tokenForms = append(f.tokenForms, form)
	for _, k := range []string{"code_verifier", "client_secret", "client_assertion", "subject_token"} {
		if v := form.Get(k); v != "" {
			f.secrets = append(f.secrets, v)
		}
	}
	f.tokenAuth = append(f.tokenAuth, r.Header.Get("Authorization"))
	fail := func(status int, code string) {
		desc := "the fake says " + code
		if f.EchoErrors { // as a careless server might
			desc += " to " + r.Header.Get("Authorization") + " " + url.Values{
				"client_secret": form["client_secret"], "code": form["code"], "code_verifier": form["code_verifier"],
				"refresh_token": form["refresh_token"], "subject_token": form["subject_token"]}.Encode()
		}
		w.WriteHeader(status)
		writeJSON(w, map[string]string{"error": code, "error_description": desc})
	}
	if !f.clientOK(r, form) {
		fail(http.StatusUnauthorized, "invalid_client")
		return
	}
	var scopes []string
	var family, subject string
	var grant codeGrant
	switch form.Get("grant_type") {
	case "authorization_code":
		c, ok := f.codes[form.Get("code")]
		grant = c
		delete(f.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || form.Get("redirect_uri") != c.redirect ||
			form.Get("resource") != c.resource {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		scopes, family, subject = c.scopes, f.id("family"), c.subject
	case "refresh_token":
		f.refreshes++
		rt := f.refresh[form.Get("refresh_token")]
		switch {
		case rt == nil:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		case rt.used:
			// Reuse of a rotated refresh token: the family is revoked.
			f.reuses++
			f.revokeFamily(rt.family)
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		rt.used = f.Rotate // (a used one was refused above)
		scopes, family, subject = rt.scopes, rt.family, rt.subject
	case "client_credentials":
		scopes, family = strings.Fields(form.Get("scope")), f.id("family")
	case TokenExchangeGrant:
		// RFC 8693: an access token this server issued (or an opaque one
		// IssueOpaque made, still active) is traded for one of the same
		// person, for the resource asked for.
		sub, ok := f.subjectOf(form.Get("subject_token"))
		switch {
		case form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token":
			fail(http.StatusBadRequest, "invalid_request")
			return
		case !ok:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		scopes, family, subject = strings.Fields(form.Get("scope")), f.id("family"), sub
	default:
		fail(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	access := f.next("access-token")
	if f.JWTAccess && grant.challenge != "" {
		access = f.accessJWTLocked(grant)
		f.secrets = append(f.secrets, access)
	}
	f.access[access] = scopes
	f.subjects[access] = subject
	out := map[string]any{"access_token": access, "token_type": "Bearer", "scope": cmp.Or(f.AnswerScope, strings.Join(scopes, " "))}
	if grant.challenge != "" && slices.Contains(scopes, "openid") {
		out["id_token"] = f.idTokenLocked(grant)
	}
	if f.ExpiresIn > 0 {
		out["expires_in"] = f.ExpiresIn
	}
	if g := form.Get("grant_type"); g != "client_credentials" && g != TokenExchangeGrant && (g == "authorization_code" || f.Rotate) {
		rt := f.next("refresh-token")
		f.refresh[rt] = &refreshToken{family: family, scopes: scopes, subject: subject}
		out["refresh_token"] = rt
	}
	writeJSON(w, out)
}

// clientOK checks a configured client's authentication (a registered or
// public client is taken at its word).
func (f *Server) clientOK(r *http.Request, form url.Values) bool {
	if f.ClientID == "" {
		return true
	}
	if a := form.Get("client_assertion"); a != "" {
		f.assertions++
		return f.ECKey != nil && verifyES256(a, f.ECKey, f.ClientID, f.Issuer())
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	return id == f.ClientID && secret == f.ClientSecret
}

func (f *Server) revokeFamily(family string) {
	maps.DeleteFunc(f.refresh, func(_ string, rt *refreshToken) bool { return rt.family == family })
	clear(f.access) // the fake revokes every access token: enough for the tests
}

// TokenExchangeGrant is RFC 8693's grant type, which the token endpoint
// takes.
const TokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

// subjectOf returns whose token tok is: an access token the token
// endpoint issued, or an active opaque one IssueOpaque made with a sub.
// f.mu is held.
func (f *Server) subjectOf(tok string) (string, bool) {
	if _, ok := f.access[tok]; ok {
		return f.subjects[tok], f.subjects[tok] != ""
	}
	if c, ok := f.opaque[tok]; ok {
		sub, _ := c["sub"].(string)
		return sub, sub != ""
	}
	return "", false
}

// Exchanges returns the token exchange requests (RFC 8693) the token
// endpoint received, oldest first.
func (f *Server) Exchanges() []url.Values {
	forms, _ := f.TokenRequests()
	return slices.DeleteFunc(forms, func(form url.Values) bool { return form.Get("grant_type") != TokenExchangeGrant })
}

// Calls returns the tools/call requests passed to Next so far, oldest
// first, with whose token each carried.
func (f *Server) Calls() []Call { return locked(f, func() []Call { return slices.Clone(f.calls) }) }

// ExpireAccess makes every access token invalid (refresh tokens stay).
func (f *Server) ExpireAccess() { f.Set(func(f *Server) { clear(f.access) }) }

// Hits counts the requests to the protected resource.
func (f *Server) Hits() int { return locked(f, func() int { return f.mcpHits }) }

// HitsOf counts the requests to path, on either server.
func (f *Server) HitsOf(path string) int { return locked(f, func() int { return f.paths[path] }) }

// RevokeAll revokes every token, as an administrator would.
func (f *Server) RevokeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.access)
	clear(f.refresh)
}

// Snapshot counts the registrations, the refreshes, the reuses of a
// rotated refresh token and the authorization requests so far.
func (f *Server) Snapshot() (registrations, refreshes, reuses, authorizes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.regBodies), f.refreshes, f.reuses, len(f.authorizes)
}

// verifyES256 checks a private_key_jwt assertion as an authorization
// server does.
func verifyES256(jwt string, pub *ecdsa.PublicKey, clientID, audience string) bool {
	raw, ok := jws.Verify(jwt, "ES256", pub)
	if !ok {
		return false
	}
	var c struct {
		Iss, Sub, Aud, Jti string
		Exp, Iat           int64
	}
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	return c.Iss == clientID && c.Sub == clientID && c.Aud == audience && c.Jti != "" && c.Exp > c.Iat
}

// covers reports whether have holds every scope of want.
func covers(have, want []string) bool {
	return !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(have, w) })
}

// LastAuthorize returns the last authorization request's parameters.
func (f *Server) LastAuthorize() url.Values {
	return locked(f, func() url.Values { return last(f.authorizes) })
}

// TokenRequests returns the token requests' forms and Authorization
// headers, in order.
func (f *Server) TokenRequests() ([]url.Values, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tokenForms), slices.Clone(f.tokenAuth)
}

// LastTokenForm returns the last token request's form.
func (f *Server) LastTokenForm() url.Values {
	forms, _ := f.TokenRequests()
	return last(forms)
}

// last is the last of s (nil when s is empty).
func last(s []url.Values) url.Values {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

// Registrations returns the registration requests' bodies.
func (f *Server) Registrations() []map[string]any {
	return locked(f, func() []map[string]any { return slices.Clone(f.regBodies) })
}

// Assertions counts the private_key_jwt assertions checked.
func (f *Server) Assertions() int { return locked(f, func() int { return f.assertions }) }

// Secrets returns every token, code and client secret the server issued,
// and every code verifier, client secret and assertion it received.
func (f *Server) Secrets() []string {
	return locked(f, func() []string { return slices.Clone(f.secrets) })
}
