package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// principalRecorder is the real engine, recording the principal of the
// context of each Execute.
type principalRecorder struct {
	server.Engine
	mu   sync.Mutex
	seen []*codemode.Principal
}

func (p *principalRecorder) wrap(e server.Engine) { p.Engine = e }

func (p *principalRecorder) Execute(ctx context.Context, code string, ap codemode.Approver) (codemode.Outcome, error) {
	p.mu.Lock()
	p.seen = append(p.seen, codemode.PrincipalFrom(ctx))
	p.mu.Unlock()
	return p.Engine.Execute(ctx, code, ap)
}

func (p *principalRecorder) principals() []*codemode.Principal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*codemode.Principal(nil), p.seen...)
}

// issuerServer serves a server whose issuer is as (streamable HTTP, a
// console stub beside it) and returns its base URL and the resource its
// tokens must name.
func issuerServer(t *testing.T, as *oauthtest.Server, rec *principalRecorder, auth config.ServerAuth) (base, resource string) {
	t.Helper()
	auth.Issuer = as.Issuer()
	opts := server.Options{Auth: &auth, Console: consoleStub(), Elicitation: true}
	if rec != nil {
		opts.Runtime = rec
	}
	base = serve(t, newServerWith(t, opts), server.TransportHTTP)
	return base, base + server.PathMCP
}

// bearerClient is an MCP client over streamable HTTP sending token; with
// an elicitation handler it declares the capability.
func bearerClient(t *testing.T, base, token string, h elicitFunc) *client.Client {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token})}
	if h != nil { // questions asked outside a tool call's answer (a task's) come on the listening stream
		topts = append(topts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(base+server.PathMCP, topts...)
	if err != nil {
		t.Fatal(err)
	}
	caps := mcp.ClientCapabilities{}
	var opts []client.ClientOption
	if h != nil {
		opts = append(opts, client.WithElicitationHandler(h))
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	return start(t, client.NewClient(tr, opts...), caps)
}

// The protected resource metadata (RFC 9728) is served without a token,
// at the path-suffixed URL of the MCP endpoint and at the bare one: the
// resource, the issuer as its authorization server, the three scopes,
// bearer tokens in the header.
func TestProtectedResourceMetadata(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp := req{method: "GET", path: p}.do(t, nil, base)
		var got map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, err)
		}
		want := map[string]any{"resource": res, "authorization_servers": []any{as.Issuer()},
			"scopes_supported": []any{"codemode:run", "codemode:approve", "codemode:admin"}, "bearer_methods_supported": []any{"header"}, "resource_name": "codemode"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p, diff)
		}
	}
	// With server.auth.resource, the metadata names it, and its host is served.
	pub := serve(t, newServerWith(t, server.Options{Auth: &config.ServerAuth{Issuer: as.Issuer(), Resource: "https://mcp.example.test/team/mcp"}}), server.TransportHTTP)
	resp := req{method: "GET", path: "/.well-known/oauth-protected-resource/team/mcp", host: "mcp.example.test"}.do(t, nil, pub)
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got["resource"] != "https://mcp.example.test/team/mcp" {
		t.Errorf("the metadata of a configured resource, by its host: %d %v %v", resp.StatusCode, got, err)
	}
	if resp := (req{method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders(), host: "mcp.example.test"}.do(t, nil, pub)); resp.StatusCode != http.StatusUnauthorized ||
		resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/team/mcp"` {
		t.Errorf("the MCP endpoint by the resource's host: %d %q; want 401 pointing at the resource's metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// Clients that look for an authorization server here are told where it is.
	resp = req{method: "GET", path: "/.well-known/oauth-authorization-server"}.do(t, nil, base)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), as.Issuer()) {
		t.Errorf("authorization server metadata here: %d %s; want 404 naming the issuer", resp.StatusCode, b)
	}
}

// A good token of the issuer, for this server, passes, and its Principal
// reaches the engine through the MCP server: subject, email, scopes.
// An opaque token is introspected and passes too.
func TestIssuerTokenGivesThePrincipal(t *testing.T) {
	as := oauthtest.New(t)
	as.IntrospectClientID, as.IntrospectClientSecret = "codemode", "rs-secret"
	rec := &principalRecorder{}
	base, res := issuerServer(t, as, rec, config.ServerAuth{Introspection: config.Introspection{ClientID: "codemode", ClientSecret: "rs-secret"}})
	jwt := as.SignJWT("RS256", map[string]any{"aud": res, "sub": "alice-7", "email": "alice@example.com", "scope": "codemode:run"})
	opaque := as.IssueOpaque(map[string]any{"aud": res, "sub": "bob-3", "name": "Bob", "scope": "codemode:run", "exp": time.Now().Add(time.Hour).Unix()})
	for _, tok := range []string{jwt, opaque} {
		c := bearerClient(t, base, tok, nil)
		out, isErr := call(t, c, "codemode", map[string]any{"code": "return 6 * 7"})
		if isErr || out["result"] != float64(42) {
			t.Fatalf("codemode: %v (isError %v)", out, isErr)
		}
	}
	seen := rec.principals()
	if len(seen) != 2 || seen[0] == nil || seen[1] == nil {
		t.Fatalf("principals the engine saw: %v; want two", seen)
	}
	if p := seen[0]; p.Subject != "alice-7" || p.Email != "alice@example.com" || p.Issuer != as.Issuer() || !p.HasScope(codemode.ScopeRun) {
		t.Errorf("the JWT's principal: %+v", p)
	}
	if p := seen[1]; p.Subject != "bob-3" || p.Display() != "Bob" {
		t.Errorf("the opaque token's principal: %+v", p)
	}
}

// Every token that is not good for this server is refused with 401,
// WWW-Authenticate naming the resource metadata (and invalid_token for a
// token sent), and a body that does not echo it; a request without one
// gets the pointer alone.
func TestIssuerRefusesBadTokens(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	meta := base + "/.well-known/oauth-protected-resource/mcp"
	good := as.SignJWT("ES256", map[string]any{"aud": res})
	claims := map[string]any{"iss": as.Issuer(), "sub": "alice", "aud": res, "exp": time.Now().Add(time.Hour).Unix()}
	for _, tc := range []struct{ name, token, challenge string }{
		{"no token", "", `Bearer resource_metadata="` + meta + `"`},
		{"another audience", as.SignJWT("ES256", map[string]any{"aud": "https://elsewhere.example/mcp"}), "another resource"},
		{"expired", as.SignJWT("ES256", map[string]any{"aud": res, "exp": time.Now().Add(-time.Hour).Unix()}), "expired"},
		{"signed by another key", oauthtest.Sign(oauthtest.NewKey(as.CurrentKey().Kid), "ES256", claims), "does not verify"},
		{"alg none", oauthtest.Sign(&oauthtest.Key{Kid: as.CurrentKey().Kid}, "none", claims), "algorithm"},
		{"opaque, no introspection", "opaque-token-1234", "server.auth.introspection"},
	} {
		h := jsonHeaders()
		if tc.token != "" {
			h["Authorization"] = "Bearer " + tc.token
		}
		resp := req{method: "POST", path: server.PathMCP, body: initBody, header: h}.do(t, nil, base)
		b, _ := io.ReadAll(resp.Body)
		www := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(www, `resource_metadata="`+meta+`"`) || !strings.Contains(www, tc.challenge) {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 401 naming the metadata and saying %q", tc.name, resp.StatusCode, www, tc.challenge)
		}
		if tc.token != "" && !strings.Contains(www, `error="invalid_token"`) {
			t.Errorf("%s: WWW-Authenticate %q lacks invalid_token", tc.name, www)
		}
		if tc.token != "" && (strings.Contains(string(b), tc.token) || strings.Contains(www, tc.token)) {
			t.Errorf("%s: the answer echoes the token", tc.name)
		}
	}
	if resp := (req{method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders("Authorization", "Bearer "+good)}.do(t, nil, base)); resp.StatusCode != http.StatusOK {
		t.Errorf("the good token after them: %d", resp.StatusCode)
	}
}

// A token without the scope a tool needs is refused with 403
// insufficient_scope naming that scope (the client can sign in again for
// it); the console takes only a token with codemode:admin, and a browser
// without one is told why.
func TestIssuerScopes(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	token := func(scope string) string { return as.SignJWT("RS256", map[string]any{"aud": res, "scope": scope}) }
	runOnly := token("codemode:run")
	sess := initialize(t, base, "Authorization", "Bearer "+runOnly)
	callBody := func(tool string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"executionId":"x"}}}`
	}
	for _, tc := range []struct {
		tool, scope string
		status      int
	}{
		{"codemode_approve", "codemode:approve", http.StatusForbidden},
		{"codemode_reject", "codemode:approve", http.StatusForbidden},
		{"codemode_rollback", "codemode:admin", http.StatusForbidden},
		{"codemode_executions", "", http.StatusOK},
	} {
		h := jsonHeaders("Authorization", "Bearer "+runOnly, "Mcp-Session-Id", sess)
		resp := req{method: "POST", path: server.PathMCP, body: callBody(tc.tool), header: h}.do(t, nil, base)
		www := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != tc.status {
			t.Errorf("%s with codemode:run: %d, want %d", tc.tool, resp.StatusCode, tc.status)
			continue
		}
		want := `Bearer error="insufficient_scope", error_description="the access token lacks the scope ` + tc.scope + ` this request needs", resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", scope="` + tc.scope + `"`
		if tc.scope != "" && www != want {
			t.Errorf("%s: WWW-Authenticate\n %q\nwant\n %q", tc.tool, www, want)
		}
	}
	// A batch is no way past the scopes: it is refused whole (mcp-go
	// answers it with a parse error; the guard does not read its calls).
	batch := "[" + callBody("codemode_executions") + "," + strings.Replace(callBody("codemode_approve"), `"id":2`, `"id":3`, 1) + "]"
	if resp := (req{method: "POST", path: server.PathMCP, body: batch, header: jsonHeaders("Authorization", "Bearer "+runOnly, "Mcp-Session-Id", sess)}.do(t, nil, base)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a batch with codemode_approve: %d, want 400", resp.StatusCode)
	}
	// The guard reads a message as mcp-go does (encoding/json: names match
	// in any case, the last wins), so a name spelt twice is no way past it.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"codemode_executions","NAME":"codemode_approve","arguments":{"executionId":"x"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","Method":"tools/call","params":{"name":"codemode_approve","arguments":{"executionId":"x"}}}`,
	} {
		if resp := (req{method: "POST", path: server.PathMCP, body: body, header: jsonHeaders("Authorization", "Bearer "+runOnly, "Mcp-Session-Id", sess)}.do(t, nil, base)); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with codemode:run: %d, want 403", body, resp.StatusCode)
		}
	}

	resp := req{method: "GET", path: "/"}.do(t, nil, base)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Console") != "" || !strings.Contains(string(b), "codemode:admin") {
		t.Errorf("the console without a token: %d %q; want 401 saying it takes codemode:admin", resp.StatusCode, b)
	}
	if resp := (req{method: "GET", path: "/", header: map[string]string{"Authorization": "Bearer " + runOnly}}.do(t, nil, base)); resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Console") != "" {
		t.Errorf("the console with codemode:run: %d, want 403", resp.StatusCode)
	}
	if resp := (req{method: "GET", path: "/", header: map[string]string{"Authorization": "Bearer " + token("codemode:admin")}}.do(t, nil, base)); resp.Header.Get("X-Console") == "" {
		t.Errorf("the console with codemode:admin: %d, not the console", resp.StatusCode)
	}
}

// Every tool the server offers has a scope in ToolScopes, so that none
// falls to the default by being forgotten.
func TestEveryToolHasAScope(t *testing.T) {
	c := connect(t, newServer(t, false), nil)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if len(server.ToolScopes[tool.Name]) == 0 {
			t.Errorf("tool %s has no scope in ToolScopes", tool.Name)
		}
	}
	if len(res.Tools) != len(server.ToolScopes) {
		t.Errorf("%d tools, %d in ToolScopes", len(res.Tools), len(server.ToolScopes))
	}
}

// Under an issuer, a call that needs approval is put to the person
// through elicitation only when their token grants codemode:approve;
// without it the run pauses for someone who may decide.
func TestIssuerElicitsOnlyForApprovers(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	for _, tc := range []struct{ scope, status string }{
		{"codemode:run", "paused"},
		{"codemode:run codemode:approve", "completed"},
	} {
		asked := 0
		c := bearerClient(t, base, as.SignJWT("RS256", map[string]any{"aud": res, "scope": tc.scope}), func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			asked++
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
		})
		out, _ := call(t, c, "codemode", map[string]any{"code": "(await notes.createNote({text: 'x'})).text"})
		if out["status"] != tc.status || (asked > 0) != (tc.status == "completed") {
			t.Errorf("scope %q: status %v after %d questions; want %s", tc.scope, out["status"], asked, tc.status)
		}
	}
}

// Under an issuer a streamable-HTTP session is its opener's: another
// person's request that names it (a POST, the GET stream, a DELETE) finds
// no session, and the session goes on for its own person.
func TestSessionsAreTheirPersons(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	bearer := func(sub string) string {
		return "Bearer " + as.SignJWT("RS256", map[string]any{"aud": res, "sub": sub, "scope": "codemode:run"})
	}
	alice, bob := bearer("alice"), bearer("bob")
	id := initialize(t, base, "Authorization", alice)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	post := func(auth string) int {
		return req{method: "POST", path: server.PathMCP, body: list,
			header: jsonHeaders("Authorization", auth, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")}.do(t, nil, base).StatusCode
	}
	if got := post(alice); got != http.StatusOK {
		t.Fatalf("alice in her session: %d, want 200", got)
	}
	if got := post(bob); got != http.StatusNotFound {
		t.Errorf("bob naming alice's session: %d, want 404", got)
	}
	get := req{method: "GET", path: server.PathMCP, header: map[string]string{"Accept": "text/event-stream", "Authorization": bob, "Mcp-Session-Id": id}}.do(t, nil, base)
	if get.StatusCode != http.StatusNotFound {
		t.Errorf("bob's GET stream of alice's session: %d, want 404", get.StatusCode)
	}
	del := req{method: "DELETE", path: server.PathMCP, header: map[string]string{"Authorization": bob, "Mcp-Session-Id": id}}.do(t, nil, base)
	if del.StatusCode != http.StatusNotFound {
		t.Errorf("bob deleting alice's session: %d, want 404", del.StatusCode)
	}
	if got := post(alice); got != http.StatusOK {
		t.Errorf("alice in her session after bob's tries: %d, want 200", got)
	}
}

// Under an issuer one person's sessions are bounded on their own: bob
// opening as many sessions as the server keeps in all ends his own least
// recently used, never alice's, which goes on.
func TestAPersonOpeningSessionsEndsOnlyTheirOwn(t *testing.T) {
	as := oauthtest.New(t)
	base, res := issuerServer(t, as, nil, config.ServerAuth{})
	bearer := func(sub string) string {
		return "Bearer " + as.SignJWT("RS256", map[string]any{"aud": res, "sub": sub, "scope": "codemode:run"})
	}
	alice, bob := bearer("alice"), bearer("bob")
	theirs := initialize(t, base, "Authorization", alice)
	var bobs []string
	for range server.MaxSessions {
		r, err := http.NewRequest("POST", base+server.PathMCP, strings.NewReader(initBody))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range jsonHeaders("Authorization", bob) {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("bob's initialize: %d", resp.StatusCode)
		}
		bobs = append(bobs, resp.Header.Get("Mcp-Session-Id"))
	}
	post := func(auth, id string) int {
		resp := req{method: "POST", path: server.PathMCP, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			header: jsonHeaders("Authorization", auth, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")}.do(t, nil, base)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if got := post(alice, theirs); got != http.StatusOK {
		t.Errorf("alice's session after bob opened %d: %d, want 200", server.MaxSessions, got)
	}
	if got := post(bob, bobs[len(bobs)-server.MaxPersonSessions-1]); got != http.StatusNotFound {
		t.Errorf("bob's session past his %d latest: %d, want 404", server.MaxPersonSessions, got)
	}
	if got := post(bob, bobs[len(bobs)-server.MaxPersonSessions]); got != http.StatusOK {
		t.Errorf("the oldest of bob's %d latest sessions: %d, want 200", server.MaxPersonSessions, got)
	}
}

// Under an issuer a legacy SSE session is its opener's too: another
// person's message for it is refused, its opener's taken.
func TestSSESessionsAreTheirPersons(t *testing.T) {
	as := oauthtest.New(t)
	auth := config.ServerAuth{Issuer: as.Issuer()}
	base := serve(t, newServerWith(t, server.Options{Auth: &auth}), server.TransportSSE)
	res := base + server.PathSSE
	bearer := func(sub string) string {
		return "Bearer " + as.SignJWT("RS256", map[string]any{"aud": res, "sub": sub, "scope": "codemode:run"})
	}
	alice, bob := bearer("alice"), bearer("bob")
	stream := req{method: "GET", path: server.PathSSE, header: map[string]string{"Accept": "text/event-stream", "Authorization": alice}}.do(t, nil, base)
	rd := bufio.NewReader(stream.Body)
	var endpoint string
	for endpoint == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream: %d, %v", stream.StatusCode, err)
		}
		if e, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = e
		}
	}
	post := func(auth string) int {
		return req{method: "POST", path: endpoint, body: initBody, header: jsonHeaders("Authorization", auth)}.do(t, nil, base).StatusCode
	}
	if got := post(bob); got != http.StatusNotFound {
		t.Errorf("bob's message for alice's session: %d, want 404", got)
	}
	if got := post(alice); got != http.StatusAccepted {
		t.Errorf("alice's message for her session: %d, want 202", got)
	}
}

// mcp-go's legacy SSE transport reads the first JSON value of a POST body
// and ignores what follows; the guard reads a body as that message too,
// so a call followed by anything is no way past its scope.
func TestSSEScopesOfABodyWithMoreAfterIt(t *testing.T) {
	as := oauthtest.New(t)
	auth := config.ServerAuth{Issuer: as.Issuer()}
	base := serve(t, newServerWith(t, server.Options{Auth: &auth}), server.TransportSSE)
	bearer := "Bearer " + as.SignJWT("RS256", map[string]any{"aud": base + server.PathSSE, "sub": "alice", "scope": "codemode:run"})
	stream := req{method: "GET", path: server.PathSSE, header: map[string]string{"Accept": "text/event-stream", "Authorization": bearer}}.do(t, nil, base)
	rd := bufio.NewReader(stream.Body)
	var endpoint string
	for endpoint == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream: %d, %v", stream.StatusCode, err)
		}
		if e, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = e
		}
	}
	approve := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"codemode_approve","arguments":{"executionId":"x"}}}`
	for _, body := range []string{approve, approve + " x", approve + "{}"} {
		if got := (req{method: "POST", path: endpoint, body: body, header: jsonHeaders("Authorization", bearer)}).do(t, nil, base).StatusCode; got != http.StatusForbidden {
			t.Errorf("%s with codemode:run: %d, want 403", body, got)
		}
	}
}
