package server_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/policy"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// consoleOf is the real approval console, built over the test server's
// runtime (newServerOf calls build).
type consoleOf struct {
	*console.Console
	opts console.Options
}

func (c *consoleOf) build(r *rt.Runtime) {
	c.opts.Engine = r
	c.Console = console.New(c.opts)
}

const (
	consoleClient = "codemode-console"
	consoleSecret = "console-secret-51d0"
)

// consoleServer serves a server whose issuer is as (JWT access tokens,
// ID tokens, the console's client) with policy p and the console signing
// people in through it, and returns its base URL, a function that makes an
// MCP client for a person, and the store.
func consoleServer(t *testing.T, as *oauthtest.Server, p *policy.Policy) (string, func(sub, name string) *client.Client, *sqlite.Store) {
	t.Helper()
	as.Set(func(s *oauthtest.Server) {
		s.JWTAccess, s.IssParam = true, true
		s.ClientID, s.ClientSecret = consoleClient, consoleSecret
	})
	var st *sqlite.Store
	auth := &config.ServerAuth{Issuer: as.Issuer(), Console: &config.ConsoleSignOn{ClientID: consoleClient, ClientSecret: consoleSecret}}
	s := newServerOf(t, server.Options{Auth: auth, Console: &consoleOf{}}, 0,
		rt.Options{Limits: sandbox.Limits{Timeout: 5 * time.Second}, Policy: p},
		func(s *sqlite.Store, _ *notes.Notes) { st = s })
	base := serve(t, s, server.TransportHTTP)
	return base, func(sub, name string) *client.Client {
		tok := as.SignJWT("RS256", map[string]any{"aud": base + server.PathMCP, "sub": sub, "name": name, "scope": strings.Join(codemode.Scopes, " ")})
		return bearerClient(t, base, tok, nil)
	}, st
}

// browser is a person's browser at the console: a cookie jar, and the
// console's pages as text.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar}}
}

// get fetches a path (following redirects) and returns the response and
// the page.
func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// post sends a form as the console's pages do.
func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	r, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", b.base)
	resp, err := b.c.Do(r)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// signIn signs person in through the issuer (the authorization endpoint
// signs in whoever as.Person names) and returns the page the console
// answers the redirect back with.
func (b *browser) signIn(as *oauthtest.Server, person map[string]any) (*http.Response, string) {
	b.t.Helper()
	as.Set(func(s *oauthtest.Server) { s.Person = person })
	return b.get("/auth/login?next=/")
}

var (
	csrfRe   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	digestRe = regexp.MustCompile(`name="digest" value="([0-9a-f]+)"`)
)

var (
	alicePerson = map[string]any{"sub": "alice", "name": "Alice", "email": "alice@example.com"}
	bobPerson   = map[string]any{"sub": "bob", "name": "Bob", "groups": []string{"platform"}}
)

// Alice and Bob sign in to the console through the issuer (authorization
// code with PKCE, the ID token and its nonce verified, the access token
// validated as the MCP endpoint's are): Alice sees her runs only; Bob, an
// approver, sees Alice's pending action with her name, never her program,
// and approves it once; the call records him, and the audit names both
// people's sign-ins and Bob's approval with source console.
func TestConsoleSignsPeopleInThroughTheIssuer(t *testing.T) {
	as := oauthtest.New(t)
	base, person, st := consoleServer(t, as, &policy.Policy{Approvers: policy.Approvers{Groups: []string{"platform"}}})
	alice, bob := person("alice", "Alice"), person("bob", "Bob")
	out, _ := call(t, alice, "codemode", map[string]any{"code": createNote})
	paused, _ := out["executionId"].(string)
	if out["status"] != "paused" {
		t.Fatalf("alice's run: %v", out)
	}
	mine, _ := call(t, bob, "codemode", map[string]any{"code": "return 'bob was here'"})
	bobs, _ := mine["executionId"].(string)

	// Before signing in, a page offers the sign-in.
	anon := newBrowser(t, base)
	if resp, page := anon.get("/"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `href="/auth/login?next=%2f"`) || strings.Contains(page, paused) {
		t.Fatalf("the console before signing in: %d\n%s", resp.StatusCode, page)
	}

	ab := newBrowser(t, base)
	if resp, page := ab.signIn(as, alicePerson); resp.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in as Alice") || !strings.Contains(page, `content="0; url=/"`) {
		t.Fatalf("alice's sign-in: %d\n%s", resp.StatusCode, page)
	}
	authz := as.LastAuthorize()
	if authz.Get("code_challenge_method") != "S256" || authz.Get("nonce") == "" || authz.Get("state") == "" || !strings.Contains(authz.Get("scope"), "openid") ||
		authz.Get("client_id") != consoleClient || authz.Get("redirect_uri") != base+"/auth/callback" {
		t.Errorf("the authorization request: %v", authz)
	}
	_, page := ab.get("/")
	if !strings.Contains(page, paused) || !strings.Contains(page, "alice&#39;s secret plan") || strings.Contains(page, bobs) {
		t.Errorf("alice's pending page: want her run %s, not bob's %s\n%s", paused, bobs, page)
	}
	if _, runs := ab.get("/runs"); !strings.Contains(runs, paused) || strings.Contains(runs, bobs) {
		t.Errorf("alice's runs: want %s and not %s\n%s", paused, bobs, runs)
	}
	if resp, page := ab.get("/runs/" + bobs); resp.StatusCode != http.StatusNotFound || strings.Contains(page, "bob was here") {
		t.Errorf("alice at bob's run: %d\n%s", resp.StatusCode, page)
	}

	bb := newBrowser(t, base)
	if resp, page := bb.signIn(as, bobPerson); resp.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in as Bob") {
		t.Fatalf("bob's sign-in: %d\n%s", resp.StatusCode, page)
	}
	_, page = bb.get("/")
	if !strings.Contains(page, paused) || !strings.Contains(page, "started by Alice") || !strings.Contains(page, "alice&#39;s secret plan") ||
		strings.Contains(page, "async () =&gt;") || strings.Contains(page, `href="/runs/`+paused+`"`) {
		t.Fatalf("bob's pending page: want alice's action and starter, not her program or run page\n%s", page)
	}
	if resp, _ := bb.get("/runs/" + paused); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob at alice's run page: %d, want 404", resp.StatusCode)
	}
	form := url.Values{"csrf": {csrfRe.FindStringSubmatch(page)[1]}, "digest": {digestRe.FindStringSubmatch(page)[1]}, "from": {"pending"}}
	resp, page := bb.post("/runs/"+paused+"/approve", form)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" || !strings.Contains(page, "You approved run <code class=\"eid\">"+paused+"</code>: it is now <span class=\"status s-completed\">completed</span>") {
		t.Fatalf("bob's approval: %d at %s\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	if resp, _ := bb.post("/runs/"+paused+"/approve", form); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob's second approval: %d, want 404 (no longer pending, and not his)", resp.StatusCode)
	}
	if _, page := ab.get("/runs/" + paused); !strings.Contains(page, "decided by Bob") {
		t.Errorf("alice's run does not say bob decided its call:\n%s", page)
	}

	// Logging out ends the session.
	_, page = bb.get("/")
	if resp, _ := bb.post("/logout", url.Values{"csrf": {csrfRe.FindStringSubmatch(page)[1]}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after logging out: %d, want the sign-in page (401)", resp.StatusCode)
	}

	recs, err := st.AuditRecords(t.Context(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Source == codemode.SourceConsole {
			got = append(got, r.Person.Subject+" "+string(r.Action)+" "+r.ExecutionID+" "+r.Outcome)
		}
	}
	unknown := func(id string) string { return "refused: unknown execution \"" + id + "\"" }
	want := []string{"alice login  ok", "alice view " + bobs + " " + unknown(bobs), "bob login  ok", "bob view " + paused + " " + unknown(paused),
		"bob approve " + paused + " ok", "bob approve " + paused + " " + unknown(paused), "bob logout  ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the console's audit:\n got %q\nwant %q", got, want)
	}
}

// A sign-in the console did not start, or that the issuer's answer does
// not back, opens no session: a forged state, a redirect replayed, an ID
// token with another nonce or for another client, an access token for
// another audience, another issuer's iss; a person granted neither
// codemode:run nor codemode:approve is refused (and audited); the page
// after a sign-in leads only to the console's own paths.
func TestConsoleSignInRefusals(t *testing.T) {
	as := oauthtest.New(t)
	base, _, st := consoleServer(t, as, &policy.Policy{})

	refused := func(name string, b *browser, resp *http.Response, page, want string) {
		t.Helper()
		if resp.StatusCode == http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("%s: %d; want a refusal saying %q\n%s", name, resp.StatusCode, want, page)
		}
		if resp, _ := b.get("/runs"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: then /runs is %d; want 401 (no session)", name, resp.StatusCode)
		}
	}

	b := newBrowser(t, base)
	resp, page := b.get("/auth/callback?state=forged-state&code=forged-code")
	refused("a forged state", b, resp, page, "not one the console is waiting for")

	// The redirect back, stopped before the browser follows it, then
	// followed twice.
	stop := newBrowser(t, base)
	stop.c.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/auth/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}
	as.Set(func(s *oauthtest.Server) { s.Person = alicePerson })
	resp, _ = stop.get("/auth/login?next=/runs")
	back := resp.Header.Get("Location")
	if !strings.HasPrefix(back, base+"/auth/callback?") {
		t.Fatalf("the issuer's redirect back: %d %q", resp.StatusCode, back)
	}
	stop.c.CheckRedirect = nil
	if resp, page := stop.get(strings.TrimPrefix(back, base)); resp.StatusCode != http.StatusOK || !strings.Contains(page, `content="0; url=/runs"`) {
		t.Fatalf("the redirect back: %d\n%s", resp.StatusCode, page)
	}
	other := newBrowser(t, base)
	resp, page = other.get(strings.TrimPrefix(back, base))
	refused("the redirect back replayed", other, resp, page, "not one the console is waiting for")

	// A redirect back to another browser than the one that started it.
	as.Set(func(s *oauthtest.Server) { s.Person = alicePerson })
	resp, _ = (&browser{t: t, base: base, c: &http.Client{Jar: stop.c.Jar, CheckRedirect: stop.noCallback}}).get("/auth/login?next=/")
	resp2, page := other.get(strings.TrimPrefix(resp.Header.Get("Location"), base))
	refused("a sign-in started in another browser", other, resp2, page, "started in another browser")

	for _, tc := range []struct {
		name   string
		change func(*oauthtest.Server)
		want   string
	}{
		{"an ID token with another nonce", func(s *oauthtest.Server) { s.IDTokenClaims = map[string]any{"nonce": "not-this-sign-in"} }, "nonce is not this sign-in"},
		{"an ID token for another client", func(s *oauthtest.Server) { s.IDTokenClaims = map[string]any{"aud": "another-client"} }, "for another client"},
		{"an access token for another audience", func(s *oauthtest.Server) {
			s.AccessTokenClaims = map[string]any{"aud": "https://elsewhere.example/mcp"}
		}, "for another resource"},
		{"a redirect from another issuer", func(s *oauthtest.Server) { s.RedirectIss = "https://evil.example" }, "names another issuer"},
		{"a person who declined", func(s *oauthtest.Server) { s.DenyWith = "access_denied" }, "answered access_denied"},
	} {
		as.Set(func(s *oauthtest.Server) {
			s.IDTokenClaims, s.AccessTokenClaims, s.RedirectIss, s.DenyWith = nil, nil, "", ""
			tc.change(s)
		})
		b := newBrowser(t, base)
		resp, page := b.signIn(as, alicePerson)
		refused(tc.name, b, resp, page, tc.want)
	}
	as.Set(func(s *oauthtest.Server) {
		s.IDTokenClaims, s.AccessTokenClaims, s.RedirectIss, s.DenyWith = nil, nil, "", ""
	})

	// Granted neither scope the console needs.
	as.Set(func(s *oauthtest.Server) { s.AccessTokenClaims = map[string]any{"scope": "openid"} })
	b = newBrowser(t, base)
	resp, page = b.signIn(as, map[string]any{"sub": "carol", "name": "Carol"})
	refused("no console scope", b, resp, page, "granted neither codemode:run nor codemode:approve")
	as.Set(func(s *oauthtest.Server) { s.AccessTokenClaims = nil })

	// After a sign-in the browser goes only to the console's own paths.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\t/evil.example"} {
		b := newBrowser(t, base)
		as.Set(func(s *oauthtest.Server) { s.Person = alicePerson })
		if resp, page := b.get("/auth/login?next=" + url.QueryEscape(next)); resp.StatusCode != http.StatusOK || !strings.Contains(page, `content="0; url=/"`) {
			t.Errorf("next=%q: %d; want the page to lead to /\n%s", next, resp.StatusCode, page)
		}
	}

	recs, err := st.AuditRecords(t.Context(), codemode.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var carol []string
	for _, r := range recs {
		if r.Person.Subject == "carol" {
			carol = append(carol, string(r.Action)+" "+r.Source+" "+r.Outcome)
		}
	}
	if len(carol) != 1 || !strings.HasPrefix(carol[0], "login console refused: Carol signed in without the scope") {
		t.Errorf("carol's audit: %q; want her refused login", carol)
	}
}

// A sign-in the token endpoint refuses shows the issuer's words on the
// login page, but never a secret they echo: the client secret (sent by
// client_secret_basic or client_secret_post), the code, the verifier.
func TestConsoleSignInRefusalShowsNoSecret(t *testing.T) {
	as := oauthtest.New(t)
	base, _, _ := consoleServer(t, as, &policy.Policy{})
	basic := base64.StdEncoding.EncodeToString([]byte(consoleClient + ":" + consoleSecret))
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		as.Set(func(s *oauthtest.Server) {
			s.EchoErrors, s.ClientSecret, s.AuthMethods = true, "not-the-console-secret", []string{method}
		})
		b := newBrowser(t, base)
		resp, page := b.signIn(as, alicePerson)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "answered 401 invalid_client: the fake says invalid_client to") {
			t.Errorf("%s: %d; want the refusal with the issuer's words\n%s", method, resp.StatusCode, page)
		}
		for _, secret := range append(as.Secrets(), consoleSecret, url.QueryEscape(consoleSecret), basic) {
			if secret != "not-the-console-secret" && strings.Contains(page, secret) {
				t.Errorf("%s: the login page shows the secret %q\n%s", method, secret, page)
			}
		}
	}
}

// noCallback stops a browser at the issuer's redirect back.
func (b *browser) noCallback(r *http.Request, _ []*http.Request) error {
	if r.URL.Path == "/auth/callback" {
		return http.ErrUseLastResponse
	}
	return nil
}

// With approvals.separation, Alice's approval of her own run in the
// console is refused with the reason, and the run stays paused.
func TestConsoleSeparation(t *testing.T) {
	as := oauthtest.New(t)
	base, person, _ := consoleServer(t, as, &policy.Policy{Separation: true})
	out, _ := call(t, person("alice", "Alice"), "codemode", map[string]any{"code": createNote})
	id, _ := out["executionId"].(string)
	b := newBrowser(t, base)
	b.signIn(as, alicePerson)
	_, page := b.get("/")
	resp, page := b.post("/runs/"+id+"/approve", url.Values{"csrf": {csrfRe.FindStringSubmatch(page)[1]}, "digest": {digestRe.FindStringSubmatch(page)[1]}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(page, "Alice started this run; approvals.separation forbids approving one&#39;s own run") || !strings.Contains(page, "paused") {
		t.Errorf("alice approving her own run: %d\n%s", resp.StatusCode, page)
	}
}
