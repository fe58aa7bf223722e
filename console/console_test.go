package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"

	"go.uber.org/goleak"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const token = "console-test-token-7f3a"

// env is a runtime over a real SQLite file with the notes connector, and
// its console served behind the server's guard on a loopback port.
type env struct {
	t    *testing.T
	ctx  context.Context
	rt   *rt.Runtime
	base string // http://127.0.0.1:port
	host string // 127.0.0.1:port
}

func newEnv(t *testing.T, tok string) *env {
	t.Helper()
	return newEnvWith(t, console.Options{Token: tok})
}

// newEnvWith is newEnv with the console's options (its Engine is set
// here; a nil Logger discards) and extra sources beside notes.
func newEnvWith(t *testing.T, opts console.Options, extra ...catalog.Source) *env {
	t.Helper()
	return newEnvOf(t, opts, nil, extra...)
}

// newEnvOf is newEnvWith with before, when not nil, called with the
// console before it serves.
func newEnvOf(t *testing.T, opts console.Options, before func(*console.Console), extra ...catalog.Source) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "codemode.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	n := notes.New(notes.Name, st)
	ex := pass.NewInProcess(pass.InProcessOptions{})
	r, err := rt.New(ctx, rt.Options{Store: st, Executor: ex, Sources: append([]catalog.Source{{Connector: n}}, extra...), Limits: sandbox.Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	opts.Engine = r
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := console.New(opts)
	if before != nil {
		before(c)
	}
	go func() {
		done <- server.ServeConsole(sctx, ln, server.Options{Console: c, Logger: slog.New(slog.DiscardHandler)})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		r.Close()
		ex.Close()
		n.Close()
		st.Close()
	})
	return &env{t: t, ctx: ctx, rt: r, base: "http://" + ln.Addr().String(), host: ln.Addr().String()}
}

// pause runs a program that pauses at createNote and returns its id.
func (e *env) pause(text string) string {
	e.t.Helper()
	o, err := e.rt.Execute(e.ctx, `async () => { const n = await notes.createNote({ text: `+jsString(text)+` }); return n.id; }`, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if o.Status != codemode.StatusPaused {
		e.t.Fatalf("status %s, want paused: %+v", o.Status, o)
	}
	return o.ExecutionID
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (e *env) status(id string) codemode.ExecStatus {
	e.t.Helper()
	x, _, err := e.rt.ExecutionLog(e.ctx, id, codemode.LogQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	return x.Status
}

// browser is an HTTP client that keeps cookies and follows no redirects,
// sending what a browser on the console's own page sends.
type browser struct {
	t   *testing.T
	e   *env
	c   *http.Client
	jar *cookiejar.Jar
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{t: e.t, e: e, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.e.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil, nil) }

// login logs in with the token and returns the response.
func (b *browser) login(tok string) page {
	b.t.Helper()
	return b.do("POST", "/login", url.Values{"token": {tok}, "next": {"/"}}, nil)
}

var (
	csrfRe   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	digestRe = regexp.MustCompile(`action="/runs/([^/"]+)/approve"[^>]*>\s*<input type="hidden" name="csrf" value="[^"]+">\s*<input type="hidden" name="digest" value="([0-9a-f]+)"`)
)

// form returns the CSRF token and the digest of run id's forms on a page.
func form(t *testing.T, p page, id string) (csrf, digest string) {
	t.Helper()
	m := csrfRe.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", p.body)
	}
	for _, d := range digestRe.FindAllStringSubmatch(p.body, -1) {
		if d[1] == id {
			return m[1], d[2]
		}
	}
	return m[1], ""
}

func TestNothingWithoutTheToken(t *testing.T) {
	e := newEnv(t, token)
	id := e.pause("secret plan")
	b := e.browser()
	for _, path := range []string{"/", "/runs", "/runs?status=paused", "/runs/" + id, "/snippets", "/nope", "/login"} {
		p := b.get(path)
		wantStatus := http.StatusUnauthorized
		if path == "/login" {
			wantStatus = http.StatusOK
		}
		if p.status != wantStatus || !strings.Contains(p.body, `name="token"`) {
			t.Errorf("GET %s: %d, want %d and the login form:\n%s", path, p.status, wantStatus, p.body)
		}
		// The login form keeps where the stranger was going (the path
		// they typed); nothing else of the run is on the page.
		rest := regexp.MustCompile(`name="next" value="[^"]*"`).ReplaceAllString(p.body, "")
		if strings.Contains(rest, id) || strings.Contains(rest, "secret plan") || strings.Contains(rest, "createNote") {
			t.Errorf("GET %s shows the run to a stranger:\n%s", path, p.body)
		}
	}
	if p := b.get("/api/version"); p.status != http.StatusUnauthorized || strings.Contains(p.body, "version") {
		t.Errorf("GET /api/version: %d %s", p.status, p.body)
	}
	for _, action := range []string{"approve", "reject", "rollback"} {
		p := b.do("POST", "/runs/"+id+"/"+action, url.Values{"csrf": {"x"}, "digest": {"y"}}, nil)
		if p.status != http.StatusUnauthorized {
			t.Errorf("POST %s: %d, want 401", action, p.status)
		}
	}
	// A wrong token, a bearer header (the console takes no header), a
	// token in the URL: still nothing.
	if p := b.login("wrong"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "not the token") {
		t.Errorf("wrong token: %d", p.status)
	}
	if p := b.do("GET", "/", nil, map[string]string{"Authorization": "Bearer " + token}); p.status != http.StatusUnauthorized {
		t.Errorf("bearer header: %d", p.status)
	}
	if p := b.get("/?token=" + token); p.status != http.StatusUnauthorized {
		t.Errorf("token in the URL: %d", p.status)
	}
	if got := e.status(id); got != codemode.StatusPaused {
		t.Fatalf("status %s after a stranger's requests", got)
	}

	// The static assets carry nothing of the store.
	for _, path := range []string{"/static/console.css", "/static/console.js", "/static/icon.svg"} {
		if p := b.get(path); p.status != http.StatusOK {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}
}

func TestLoginSetsAStrictSessionCookie(t *testing.T) {
	e := newEnv(t, token)
	id := e.pause("hello")
	b := e.browser()
	p := b.do("POST", "/login", url.Values{"token": {token}, "next": {"/runs/" + id}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/"+id {
		t.Fatalf("login: %d to %q", p.status, p.header.Get("Location"))
	}
	cookies := (&http.Response{Header: p.header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies: %v", p.header.Values("Set-Cookie"))
	}
	ck := cookies[0]
	_, port, _ := net.SplitHostPort(e.host)
	if ck.Name != "codemode_console_"+port || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || ck.Path != "/" || ck.MaxAge <= 0 {
		t.Errorf("session cookie %+v: want codemode_console_%s, HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", ck, port)
	}
	if strings.Contains(ck.Value, token) {
		t.Error("the cookie carries the token")
	}
	if p := b.get("/"); p.status != http.StatusOK || !strings.Contains(p.body, id) {
		t.Fatalf("after login: %d", p.status)
	}
	// An open redirect through next is not possible.
	// Nor through characters browsers drop from a URL (a tab, a newline:
	// "/\t/evil.example" is "//evil.example" to them) or that hide what the
	// path is.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "/runs\x00", "/runs/\u202eexe.txt", "/\u200b/evil.example"} {
		p := e.browser().do("POST", "/login", url.Values{"token": {token}, "next": {next}}, nil)
		if p.header.Get("Location") != "/" {
			t.Errorf("next %q leads to %q", next, p.header.Get("Location"))
		}
	}
	// Logging out ends the session for good.
	csrf, _ := form(t, b.get("/"), id)
	if p := b.do("POST", "/logout", url.Values{"csrf": {csrf}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.status)
	}
	stale := e.browser()
	stale.jar.SetCookies(mustURL(t, e.base), []*http.Cookie{{Name: ck.Name, Value: ck.Value}})
	if p := stale.get("/"); p.status != http.StatusUnauthorized {
		t.Errorf("the logged-out session still opens the console: %d", p.status)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Under TLS the cookie is Secure and __Host- prefixed.
func TestSecureCookieUnderTLS(t *testing.T) {
	c := console.New(console.Options{Engine: nil, Token: token, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewTLSServer(c)
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("login over TLS: %d, cookies %v", resp.StatusCode, resp.Header.Values("Set-Cookie"))
	}
	if ck := cookies[0]; !strings.HasPrefix(ck.Name, "__Host-codemode_console_") || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie over TLS: %+v", ck)
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	e := newEnv(t, token)
	id := e.pause("x")
	anon, user := e.browser(), e.browser()
	user.login(token)
	responses := map[string]page{
		"login":       anon.get("/"),
		"wrong token": anon.login("nope"),
		"pending":     user.get("/"),
		"run":         user.get("/runs/" + id),
		"runs":        user.get("/runs"),
		"snippets":    user.get("/snippets"),
		"not found":   user.get("/nowhere"),
		"bad filter":  user.get("/runs?status=nonsense"),
		"css":         anon.get("/static/console.css"),
		"js":          anon.get("/static/console.js"),
		"api":         user.get("/api/version"),
		"no csrf":     user.do("POST", "/runs/"+id+"/approve", url.Values{}, nil),
	}
	for name, p := range responses {
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", name, csp)
		}
		if p.header.Get("X-Frame-Options") != "DENY" || p.header.Get("Referrer-Policy") != "no-referrer" || p.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Frame-Options %q, Referrer-Policy %q, X-Content-Type-Options %q", name,
				p.header.Get("X-Frame-Options"), p.header.Get("Referrer-Policy"), p.header.Get("X-Content-Type-Options"))
		}
		if strings.Contains(p.body, "<script>") || regexp.MustCompile(`\son[a-z]+=`).MatchString(p.body) {
			t.Errorf("%s: inline script in the page", name)
		}
	}
	if p := responses["bad filter"]; p.status != http.StatusBadRequest || !strings.Contains(p.body, "unknown execution status") {
		t.Errorf("bad filter: %d", p.status)
	}
}

// A decision needs the session's CSRF token and a same-origin request;
// nothing runs otherwise.
func TestDecisionsNeedCSRFAndSameOrigin(t *testing.T) {
	e := newEnv(t, token)
	id := e.pause("guarded")
	b := e.browser()
	b.login(token)
	csrf, digest := form(t, b.get("/"), id)
	if digest == "" {
		t.Fatal("no approve form for the run")
	}
	_, port, _ := net.SplitHostPort(e.host)
	attempts := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no csrf", url.Values{"digest": {digest}}, nil},
		{"wrong csrf", url.Values{"csrf": {"forged"}, "digest": {digest}}, nil},
		{"another session's csrf", url.Values{"csrf": {func() string { o := e.browser(); o.login(token); c, _ := form(t, o.get("/"), id); return c }()}, "digest": {digest}}, nil},
		{"cross-site", url.Values{"csrf": {csrf}, "digest": {digest}}, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{"same site, other port", url.Values{"csrf": {csrf}, "digest": {digest}}, map[string]string{"Origin": "http://127.0.0.1:1" + port, "Sec-Fetch-Site": "same-site"}},
		{"foreign Origin, no fetch metadata", url.Values{"csrf": {csrf}, "digest": {digest}}, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": ""}},
	}
	for _, a := range attempts {
		p := b.do("POST", "/runs/"+id+"/approve", a.form, a.header)
		if p.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403\n%s", a.name, p.status, p.body)
		}
	}
	if got := e.status(id); got != codemode.StatusPaused {
		t.Fatalf("status %s after refused decisions", got)
	}

	// The real thing: same origin, the session's token, the digest shown.
	p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/"+id {
		t.Fatalf("approve: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if got := e.status(id); got != codemode.StatusCompleted {
		t.Fatalf("status %s after the approval", got)
	}
	run := b.get("/runs/" + id)
	if !strings.Contains(run.body, "Approved: the run completed.") {
		t.Errorf("the run page does not show the outcome:\n%s", run.body)
	}
	// The outcome is shown once.
	if again := b.get("/runs/" + id); strings.Contains(again.body, "Approved: the run completed.") {
		t.Error("the outcome is shown again")
	}
	// A second approval of the same view is refused: the run is no longer paused.
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusConflict || !strings.Contains(p.body, "only a paused execution can be approved") {
		t.Errorf("second approval: %d\n%s", p.status, p.body)
	}
}

// A decision about what is no longer pending is refused, and nothing runs.
func TestDigestMismatchIsRefused(t *testing.T) {
	e := newEnv(t, token)
	o, err := e.rt.Execute(e.ctx, `async () => { await notes.createNote({ text: "first" }); await notes.createNote({ text: "second" }); return "done" }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := o.ExecutionID
	b := e.browser()
	b.login(token)
	csrf, shown := form(t, b.get("/"), id)

	// Someone approves through another surface; the run pauses at "second".
	if o, err := e.rt.Approve(e.ctx, id, nil); err != nil || o.Status != codemode.StatusPaused {
		t.Fatalf("approve elsewhere: %v %+v", err, o)
	}
	for _, action := range []string{"approve", "reject"} {
		p := b.do("POST", "/runs/"+id+"/"+action, url.Values{"csrf": {csrf}, "digest": {shown}}, nil)
		if p.status != http.StatusConflict || !strings.Contains(p.body, "changed since they were shown") {
			t.Errorf("%s with the old digest: %d\n%s", action, p.status, p.body)
		}
		// The refusal shows what is pending now.
		if !strings.Contains(p.body, `&#34;second&#34;`) && !strings.Contains(p.body, `"second"`) {
			t.Errorf("%s refusal does not show the new pending action", action)
		}
	}
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}}, nil); p.status != http.StatusBadRequest {
		t.Errorf("approve without a digest: %d", p.status)
	}
	if got := e.status(id); got != codemode.StatusPaused {
		t.Fatalf("status %s after refused decisions", got)
	}
	_, entries, _ := e.rt.ExecutionLog(e.ctx, id, codemode.LogQuery{})
	if len(entries) != 2 || entries[1].State != codemode.EntryPending {
		t.Fatalf("log after refused decisions: %+v", entries)
	}
}

// Arguments, programs and errors are shown escaped, with hidden
// characters made visible.
func TestHostileTextIsEscapedAndVisible(t *testing.T) {
	e := newEnv(t, token)
	hostile := "</script><script>alert(1)</script>\"><img src=x onerror=alert(2)> exe.\u202etxt zero\u200bwidth\nline2 {{.CSRF}}"
	id := e.pause(hostile)
	b := e.browser()
	b.login(token)
	for _, path := range []string{"/", "/runs/" + id, "/runs"} {
		p := b.get(path)
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<img") {
			t.Errorf("%s: hostile markup came through:\n%s", path, p.body)
		}
		if strings.ContainsRune(p.body, '\u202e') || strings.ContainsRune(p.body, '\u200b') {
			t.Errorf("%s: a hidden character is on the page as itself", path)
		}
		if path == "/runs" {
			continue // the arguments are folded in the calls table there too, checked below
		}
		for _, want := range []string{
			`&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;`,
			`<mark class="hid" title="hidden character U+202E">\u202E</mark>`,
			`<mark class="hid" title="hidden character U+200B">\u200B</mark>`,
			`<mark class="hid" title="hidden character U+000A">\n</mark>`,
			`{{.CSRF}}`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("%s: missing %s", path, want)
			}
		}
	}
	// A long value is folded, never dropped.
	long := strings.Repeat("0123456789", 100) + "END"
	lid := e.pause(long)
	p := b.get("/runs/" + lid)
	if !strings.Contains(p.body, `<details class="fold"`) || !strings.Contains(p.body, "1,003 characters") && !strings.Contains(p.body, "1003 characters") || !strings.Contains(p.body, "END") {
		t.Errorf("a long argument is not folded whole")
	}
}

func TestRejectAndRollBack(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)

	rid := e.pause("reject me")
	csrf, digest := form(t, b.get("/"), rid)
	p := b.do("POST", "/runs/"+rid+"/reject", url.Values{"csrf": {csrf}, "digest": {digest}, "reason": {"not today"}}, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("reject: %d\n%s", p.status, p.body)
	}
	x, _, _ := e.rt.ExecutionLog(e.ctx, rid, codemode.LogQuery{})
	if x.Status != codemode.StatusRejected || !strings.Contains(x.Error, "not today") {
		t.Fatalf("after reject: %s %q", x.Status, x.Error)
	}
	if page := b.get("/runs/" + rid); !strings.Contains(page.body, "Rejected: the run was rejected.") || strings.Contains(page.body, `class="rollback"`) {
		t.Errorf("rejected run page:\n%s", page.body)
	}

	aid := e.pause("keep then undo")
	csrf, digest = form(t, b.get("/"), aid)
	if p := b.do("POST", "/runs/"+aid+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", p.status)
	}
	run := b.get("/runs/" + aid)
	if !strings.Contains(run.body, `<button type="submit" class="rollback">Roll back</button>`) {
		t.Fatalf("no Roll back on a run with an applied, revertible call:\n%s", run.body)
	}
	if p := b.do("POST", "/runs/"+aid+"/rollback", url.Values{"csrf": {csrf}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("rollback: %d\n%s", p.status, p.body)
	}
	if got := e.status(aid); got != codemode.StatusRolledBack {
		t.Fatalf("status after rollback: %s", got)
	}
	page := b.get("/runs/" + aid)
	if !strings.Contains(page.body, "Rolled back: the run was rolled back.") || !strings.Contains(page.body, "Reverted calls: 1.") || !strings.Contains(page.body, "st-reverted") {
		t.Errorf("rolled-back run page:\n%s", page.body)
	}
	// The audit trail filters by status.
	if p := b.get("/runs?status=rolled_back"); !strings.Contains(p.body, aid) || strings.Contains(p.body, rid) {
		t.Errorf("filtered runs page lists the wrong runs")
	}
}

// Without a token the console is open (as the MCP endpoint is then), but
// its forms still need the session's CSRF token.
func TestWithoutATokenFormsStillNeedCSRF(t *testing.T) {
	e := newEnv(t, "")
	id := e.pause("open")
	b := e.browser()
	p := b.get("/")
	if p.status != http.StatusOK || !strings.Contains(p.body, id) || strings.Contains(p.body, "Log out") {
		t.Fatalf("GET / without a token configured: %d", p.status)
	}
	if p := e.browser().do("POST", "/runs/"+id+"/approve", url.Values{"digest": {"x"}}, nil); p.status != http.StatusForbidden {
		t.Errorf("approve without a session: %d", p.status)
	}
	csrf, digest := form(t, p, id)
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
		t.Errorf("approve: %d", p.status)
	}
}

func TestVersionChangesWithRuns(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	v1 := b.get("/api/version").body
	if v2 := b.get("/api/version").body; v1 != v2 {
		t.Fatalf("version changed with nothing happening: %s %s", v1, v2)
	}
	e.pause("new")
	if v3 := b.get("/api/version").body; v3 == v1 {
		t.Fatal("a new pause does not change the version")
	}
}

// The guard in front of the console checks Host: a rebinding page gets
// nothing.
func TestForeignHostIsRefused(t *testing.T) {
	e := newEnv(t, "")
	req, _ := http.NewRequest("GET", e.base+"/", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
}

// Wrong tokens typed at the login are limited per client address: past
// the limit a login gets 429 with Retry-After and a page saying when to
// try again, before its token is looked at (the right one too, until the
// limit lifts); the log gets a bounded number of lines, none with a token.
func TestWrongLoginsAreLimited(t *testing.T) {
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	logs := &fixture.SyncBuffer{}
	e := newEnvWith(t, console.Options{
		Token:    token,
		Failures: throttle.New(3, time.Minute, func() time.Time { return frozen }),
		Logger:   slog.New(slog.NewTextHandler(logs, nil)),
	})
	b := e.browser()
	for i := range 3 {
		if p := b.login(fmt.Sprintf("guess-%d", i)); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "not the token") {
			t.Fatalf("wrong token %d: %d", i+1, p.status)
		}
	}
	for _, tok := range []string{"guess-3", token} {
		p := b.login(tok)
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "60" || !strings.Contains(p.body, "Too many wrong tokens from your address: try again in 60 s.") || !strings.Contains(p.body, `name="token"`) {
			t.Errorf("login with %q past the limit: %d, Retry-After %q; want 429, 60 and the login form saying when to try again:\n%s", tok, p.status, p.header.Get("Retry-After"), p.body)
		}
	}
	if p := b.get("/"); p.status != http.StatusUnauthorized {
		t.Errorf("a page after the refused logins: %d, want 401 (not logged in)", p.status)
	}
	logged := logs.String()
	if n := strings.Count(logged, "level=WARN"); n != 3 {
		t.Errorf("%d lines about logins, want 3 (the limit of lines):\n%s", n, logged)
	}
	for _, secret := range []string{"guess-", token} {
		if strings.Contains(logged, secret) {
			t.Errorf("the log shows a token (%s):\n%s", secret, logged)
		}
	}
}

// A refusal that names what a link carried repeats it clipped: a page
// never shows a long text someone put in a link (a page that looks like
// the console's own words).
func TestRefusalsClipWhatTheLinkCarried(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	long := "Your+session+has+expired.+Paste+your+token+at+evil.example" + strings.Repeat("+pad", 200)
	for _, path := range []string{"/runs?limit=" + long, "/runs?status=" + long, "/runs/" + url.PathEscape(strings.ReplaceAll(long, "+", " ")),
		"/runs/x/value?seq=" + long, "/runs/x/value?seq=1&part=" + long} {
		p := b.get(path)
		if p.status/100 != 4 || !strings.Contains(p.body, "Your session has expired. Paste your tok…") || strings.Contains(p.body, "evil.example") {
			t.Errorf("GET %.40s…: %d; want a refusal quoting the link's text clipped\n%s", path, p.status, p.body)
		}
	}
}

// A console without a token gives every browser without a session one,
// so any web page can make it start sessions (an image of its address
// is requested without the SameSite=Strict cookie). Those never come
// back; a flood of them does not end the session of a person who uses
// the console, whose forms still go through.
func TestSessionsStartedElsewhereDoNotEndOneInUse(t *testing.T) {
	e := newEnv(t, "")
	id := e.pause("still mine")
	b := e.browser()
	b.get("/")
	p := b.get("/")
	for range console.MaxSessions + 10 {
		req, err := http.NewRequest("GET", e.base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	csrf, digest := form(t, p, id)
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
		t.Errorf("approve after a flood of sessions started elsewhere: %d\n%.300s", p.status, p.body)
	}
}

// The local user is named one way whichever way a run started: `local`,
// with the operating system's user name the command line records beside
// it, not "local" for a run started on stdio and "ana" for one started on
// the command line (codemode-mcp run), as if they were two people.
func TestTheLocalUserIsNamedOneWay(t *testing.T) {
	e := newEnv(t, token)
	stdio := e.run(`async () => 1`, codemode.StatusCompleted)
	o, err := e.rt.Execute(codemode.WithPerson(e.ctx, codemode.Person{Subject: codemode.LocalSubject, Name: "ana"}), `async () => 2`, nil)
	if err != nil || o.Status != codemode.StatusCompleted {
		t.Fatalf("Execute: %+v, %v", o, err)
	}
	b := e.browser()
	b.login(token)
	runs := b.get("/runs")
	for id, want := range map[string]string{stdio: "local", o.ExecutionID: "local (ana)"} {
		got := "(none)"
		if m := regexp.MustCompile(`<code class="eid">` + id + `</code>.*? by ([^·<]*) · `).FindStringSubmatch(runs.body); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("the runs page names the starter of %s %q, want %q", id, got, want)
		}
		if p := b.get("/runs/" + id); !strings.Contains(p.body, "</time> by "+want+"; last change") {
			t.Errorf("the page of run %s does not name its starter %q:\n%s", id, want, p.body)
		}
	}
}
