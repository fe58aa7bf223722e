package oauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/runtime/sqlitestore"
)

// fakeAS is an authorization server and a protected resource (an "MCP
// endpoint" at /mcp that wants a Bearer token) on two real HTTP servers
// on 127.0.0.1. Its fields set how it behaves, and misbehaves; what it
// saw is recorded for the test to check.
type fakeAS struct {
	t      *testing.T
	as, rs *httptest.Server

	// Behaviour, set before use.
	issuerPath      string   // the issuer's path ("" or "/tenant1")
	openID          bool     // metadata only at OpenID Connect's well-known URL
	noMetadata      bool     // no authorization server metadata at all
	noPRM           bool     // no protected resource metadata
	prmInHeader     bool     // the 401 names the metadata URL
	prmPath         string   // where the protected resource metadata is ("" default)
	prmResource     string   // the metadata's resource ("" the server's URL)
	prmScopes       []string // its scopes_supported
	challengeScope  string   // scope="" in the 401
	asScopes        []string // the server's scopes_supported
	authMethods     []string // token_endpoint_auth_methods_supported (nil: none listed)
	noRegistration  bool
	cimd            bool   // client_id_metadata_document_supported
	noPKCE          bool   // no code_challenge_methods_supported
	issParam        bool   // authorization_response_iss_parameter_supported, and iss sent
	redirectIss     string // iss sent on the redirect (overrides the real one)
	noRedirectIss   bool   // iss never sent on the redirect
	expiresIn       int    // seconds; 0 sends none
	rotate          bool   // refresh tokens rotate (a reused one revokes the family)
	needScopes      []string
	alwaysForbidden bool // 403 insufficient_scope whatever the token
	clientID        string
	clientSecret    string
	ecKey           *ecdsa.PublicKey // verifies private_key_jwt assertions
	metadataPad     int              // bytes of padding in the metadata (huge answers)
	hangToken       chan struct{}    // when set, the token endpoint waits for it
	asOnRS          bool             // the authorization server is the resource server's origin
	denyWith        string           // the authorization endpoint redirects with this error

	mu            sync.Mutex
	codes         map[string]codeGrant
	access        map[string][]string // valid access tokens and their scopes
	refresh       map[string]*refreshToken
	registrations int
	refreshes     int
	reuses        int
	authorizes    []url.Values
	tokenForms    []url.Values
	tokenAuth     []string
	regBodies     []map[string]any
	assertions    int
	seq           int
	mcpHits       int            // requests to /mcp
	paths         map[string]int // requests by path, on both servers
	secrets       []string       // every token, code, secret it issued or saw
}

type codeGrant struct {
	challenge, redirect, clientID, resource string
	scopes                                  []string
}

type refreshToken struct {
	family string
	used   bool
	scopes []string
}

func newFakeAS(t *testing.T) *fakeAS {
	f := &fakeAS{t: t, prmInHeader: true, expiresIn: 3600, codes: map[string]codeGrant{},
		access: map[string][]string{}, refresh: map[string]*refreshToken{}, paths: map[string]int{}}
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	f.rs = httptest.NewServer(http.HandlerFunc(f.serveRS))
	t.Cleanup(f.as.Close)
	t.Cleanup(f.rs.Close)
	return f
}

func (f *fakeAS) issuer() string {
	if f.asOnRS {
		return f.rs.URL + f.issuerPath
	}
	return f.as.URL + f.issuerPath
}
func (f *fakeAS) serverURL() string { return f.rs.URL + "/mcp" }
func (f *fakeAS) prmLocation() string {
	return cmpOr(f.prmPath, "/.well-known/oauth-protected-resource/mcp")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// next makes a new secret value (a token, a code, a client secret) and
// remembers it.
func (f *fakeAS) next(prefix string) string {
	v := f.id(prefix)
	f.secrets = append(f.secrets, v)
	return v
}

// id makes a new value that is no secret (a client id).
func (f *fakeAS) id(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s-%d-%s", prefix, f.seq, strings.Repeat("x", 12))
}

// serveRS is the protected resource: /mcp wants a valid token (with
// needScopes), and the protected resource metadata.
func (f *fakeAS) serveRS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.asOnRS && r.URL.Path != "/mcp" && (f.noPRM || r.URL.Path != f.prmLocation()) {
		f.mu.Unlock()
		f.serveAS(w, r)
		return
	}
	defer f.mu.Unlock()
	f.paths[r.URL.Path]++
	if r.URL.Path == f.prmLocation() && !f.noPRM {
		res := cmpOr(f.prmResource, f.serverURL())
		writeJSON(w, map[string]any{"resource": res, "authorization_servers": []string{f.issuer()}, "scopes_supported": f.prmScopes})
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	f.mcpHits++
	challenge := `Bearer error="invalid_token"`
	if f.prmInHeader && !f.noPRM {
		challenge += `, resource_metadata="` + f.rs.URL + f.prmLocation() + `"`
	}
	if f.challengeScope != "" {
		challenge += `, scope="` + f.challengeScope + `"`
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	scopes, valid := f.access[tok]
	if !ok || !valid {
		w.Header().Set("WWW-Authenticate", challenge)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if f.alwaysForbidden || !covers(scopes, f.needScopes) {
		want := strings.Join(f.needScopes, " ")
		if f.alwaysForbidden {
			want = f.challengeScope
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+want+`"`)
		w.WriteHeader(http.StatusForbidden)
		return
	}
	body, _ := io.ReadAll(r.Body)
	writeJSON(w, map[string]any{"ok": true, "echo": string(body)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeAS) metadata() map[string]any {
	m := map[string]any{
		"issuer":                   f.issuer(),
		"authorization_endpoint":   f.issuer() + "/authorize",
		"token_endpoint":           f.issuer() + "/token",
		"revocation_endpoint":      f.issuer() + "/revoke",
		"response_types_supported": []string{"code"},
	}
	if !f.noRegistration {
		m["registration_endpoint"] = f.issuer() + "/register"
	}
	if !f.noPKCE {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if f.asScopes != nil {
		m["scopes_supported"] = f.asScopes
	}
	if f.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = f.authMethods
	}
	if f.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if f.issParam {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if f.metadataPad > 0 {
		m["padding"] = strings.Repeat("p", f.metadataPad)
	}
	return m
}

func (f *fakeAS) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hang := f.hangToken
	f.mu.Unlock()
	if hang != nil && r.URL.Path == f.issuerPath+"/token" {
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
	wellKnownOAuth := "/.well-known/oauth-authorization-server" + f.issuerPath
	wellKnownOIDC := "/.well-known/openid-configuration" + f.issuerPath
	if f.issuerPath != "" {
		wellKnownOIDC = f.issuerPath + "/.well-known/openid-configuration"
	}
	switch {
	case !f.noMetadata && !f.openID && p == wellKnownOAuth, !f.noMetadata && f.openID && p == wellKnownOIDC:
		writeJSON(w, f.metadata())
	case p == f.issuerPath+"/authorize":
		f.authorize(w, r)
	case p == f.issuerPath+"/token":
		f.token(w, r)
	case p == f.issuerPath+"/register" && !f.noRegistration:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.regBodies = append(f.regBodies, body)
		f.registrations++
		out := map[string]any{"client_id": f.id("client"), "redirect_uris": body["redirect_uris"]}
		if m, _ := body["token_endpoint_auth_method"].(string); m != "none" {
			out["client_secret"] = f.next("client-secret")
			out["token_endpoint_auth_method"] = m
		}
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, out)
	case p == f.issuerPath+"/revoke":
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

func (f *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.authorizes = append(f.authorizes, q)
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE required", http.StatusBadRequest)
		return
	}
	code := f.next("code")
	f.codes[code] = codeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"),
		clientID: q.Get("client_id"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	back := u.Query()
	back.Set("state", q.Get("state"))
	if f.denyWith != "" {
		back.Set("error", f.denyWith)
		back.Set("error_description", "the person said no")
	} else {
		back.Set("code", code)
	}
	switch {
	case f.redirectIss != "":
		back.Set("iss", f.redirectIss)
	case f.issParam && !f.noRedirectIss:
		back.Set("iss", f.issuer())
	}
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (f *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	form := r.PostForm
	f.tokenForms = append(f.tokenForms, form)
	for _, k := range []string{"code_verifier", "client_secret", "client_assertion"} {
		if v := form.Get(k); v != "" {
			f.secrets = append(f.secrets, v)
		}
	}
	f.tokenAuth = append(f.tokenAuth, r.Header.Get("Authorization"))
	fail := func(status int, code string) {
		w.WriteHeader(status)
		writeJSON(w, map[string]string{"error": code, "error_description": "the fake says " + code})
	}
	if !f.clientOK(r, form) {
		fail(http.StatusUnauthorized, "invalid_client")
		return
	}
	var scopes []string
	var family string
	switch form.Get("grant_type") {
	case "authorization_code":
		c, ok := f.codes[form.Get("code")]
		delete(f.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		switch {
		case !ok:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge, form.Get("redirect_uri") != c.redirect,
			form.Get("resource") != c.resource:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		scopes, family = c.scopes, f.id("family")
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
		if f.rotate {
			rt.used = true
		}
		scopes, family = rt.scopes, rt.family
	case "client_credentials":
		scopes, family = strings.Fields(form.Get("scope")), f.id("family")
	default:
		fail(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	access := f.next("access-token")
	f.access[access] = scopes
	out := map[string]any{"access_token": access, "token_type": "Bearer", "scope": strings.Join(scopes, " ")}
	if f.expiresIn > 0 {
		out["expires_in"] = f.expiresIn
	}
	if form.Get("grant_type") != "client_credentials" && (form.Get("grant_type") == "authorization_code" || f.rotate) {
		rt := f.next("refresh-token")
		f.refresh[rt] = &refreshToken{family: family, scopes: scopes}
		out["refresh_token"] = rt
	}
	writeJSON(w, out)
}

// clientOK checks a configured client's authentication (a registered or
// public client is taken at its word).
func (f *fakeAS) clientOK(r *http.Request, form url.Values) bool {
	if f.clientID == "" {
		return true
	}
	if a := form.Get("client_assertion"); a != "" {
		f.assertions++
		return f.ecKey != nil && verifyES256(a, f.ecKey, f.clientID, f.issuer())
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	return id == f.clientID && secret == f.clientSecret
}

func (f *fakeAS) revokeFamily(family string) {
	for tok, rt := range f.refresh {
		if rt.family == family {
			delete(f.refresh, tok)
		}
	}
	clear(f.access) // the fake revokes every access token: enough for the tests
}

// expireAccess makes every access token invalid (refresh tokens stay).
func (f *fakeAS) expireAccess() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.access)
}

func (f *fakeAS) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mcpHits
}

func (f *fakeAS) hitsOf(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[path]
}

// revokeAll revokes every token, as an administrator would.
func (f *fakeAS) revokeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.access)
	clear(f.refresh)
}

func (f *fakeAS) snapshot() (registrations, refreshes, reuses, authorizes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registrations, f.refreshes, f.reuses, len(f.authorizes)
}

// verifyES256 checks a private_key_jwt assertion as an authorization
// server does.
func verifyES256(jwt string, pub *ecdsa.PublicKey, clientID, audience string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, sum[:], r, s) {
		return false
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Iss, Sub, Aud, Jti string
		Exp, Iat           int64
	}
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	return c.Iss == clientID && c.Sub == clientID && c.Aud == audience && c.Jti != "" && c.Exp > c.Iat
}

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *testClock { return &testClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is what a test's sessions share: a real SQLite store (a handle per
// "process"), the sealing key, a scrubber and a log.
type env struct {
	t     *testing.T
	path  string
	seal  *Sealer
	scrub *scrub.Scrubber
	clock *testClock
	logs  *syncBuffer
	log   *slog.Logger
}

func newEnv(t *testing.T) *env {
	seal, err := NewSealer(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	return &env{t: t, path: filepath.Join(t.TempDir(), "codemode.db"), seal: seal, scrub: scrub.New(),
		clock: newClock(), logs: logs, log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// store opens a new handle on the env's database, as another process
// would.
func (e *env) store() *sqlitestore.Store {
	e.t.Helper()
	st, err := sqlitestore.Open(context.Background(), e.path, sqlitestore.Options{Logger: e.log})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

// session starts a session on a store handle of its own, with cfg's
// Server, Store, Sealer, Scrubber, Logger and Now filled in.
func (e *env) session(f *fakeAS, cfg Config) *Session {
	e.t.Helper()
	if cfg.Server == "" {
		cfg.Server = f.serverURL()
	}
	cfg.Connector = cmpOr(cfg.Connector, "remote")
	cfg.Store, cfg.Sealer, cfg.Scrubber, cfg.Logger, cfg.Now = Records{R: e.store()}, e.seal, e.scrub, e.log, e.clock.Now
	s, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// call sends a request to the fake's protected resource through the
// session's transport and returns the status (0 with the error when the
// transport failed).
func call(t *testing.T, s *Session, f *fakeAS) (int, error) {
	t.Helper()
	c := &http.Client{Transport: s.Transport(nil)}
	resp, err := c.Post(f.serverURL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), "tools/list") {
		t.Errorf("the body was not sent again whole: %s", body)
	}
	return resp.StatusCode, nil
}

// signIn runs a whole sign-in: BeginSignIn, a "browser" that follows the
// authorization URL's redirects to the loopback listener, and Wait. It
// returns the page the browser ended on.
func signIn(t *testing.T, s *Session) (string, error) {
	t.Helper()
	a, err := s.BeginSignIn(context.Background())
	if err != nil {
		return "", err
	}
	defer a.Close()
	page := browse(t, a.URL())
	return page, a.Wait(context.Background())
}

// browse GETs u following redirects, as a browser that approves at once
// does, and returns the final page.
func browse(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// lastAuthorize returns the last authorization request's parameters.
func (f *fakeAS) lastAuthorize() url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.authorizes) == 0 {
		return nil
	}
	return f.authorizes[len(f.authorizes)-1]
}

func (f *fakeAS) lastTokenForm() url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.tokenForms) == 0 {
		return nil
	}
	return f.tokenForms[len(f.tokenForms)-1]
}

func sortedScopes(s string) []string {
	out := strings.Fields(s)
	slices.Sort(out)
	return out
}
