package server_test

import (
	"encoding/json"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// A client refused for want of the token is told why: the 401 says that a
// bearer token is required (in WWW-Authenticate, which clients read, and
// in its body), and the paths where clients then look for OAuth answer 404
// with JSON saying the same, not the console's login page.
func TestClientsWithoutTheTokenAreToldWhy(t *testing.T) {
	for _, token := range []string{"s3cret", ""} {
		base := serve(t, newServerWith(t, server.Options{AuthToken: token, Console: consoleStub()}), server.TransportHTTP)
		for _, p := range []string{
			"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
			"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp",
			"/.well-known/openid-configuration", "/mcp/.well-known/openid-configuration",
			"/register", "/authorize", "/token",
		} {
			method := "GET"
			if p == "/register" || p == "/token" {
				method = "POST"
			}
			resp := req{method: method, path: p, body: `{"client_name":"x"}`, header: jsonHeaders()}.do(t, nil, base)
			b, _ := io.ReadAll(resp.Body)
			var body struct {
				Error            string `json:"error"`
				ErrorDescription string `json:"error_description"`
			}
			err := json.Unmarshal(b, &body)
			if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" || err != nil || resp.Header.Get("X-Console") != "" {
				t.Errorf("token %q, %s %s: %d %s %q; want 404 JSON, not the console", token, method, p, resp.StatusCode, resp.Header.Get("Content-Type"), b)
				continue
			}
			b, _ = json.Marshal(body)
			if !strings.Contains(body.ErrorDescription, "no OAuth authorization server") ||
				strings.Contains(body.ErrorDescription, "bearer token") != (token != "") {
				t.Errorf("token %q, %s: %s; want it to say there is no OAuth, and that a bearer token is required exactly when one is", token, p, b)
			}
		}
		if token == "" {
			continue
		}
		for _, tc := range []struct {
			auth, wantHeader, wantBody string
		}{
			{"", `Bearer realm="codemode-mcp", error_description="this server requires a bearer token in the Authorization header (its server.auth_token or CODEMODE_TOKEN)"`, "requires a bearer token"},
			{"Bearer wrong", `Bearer realm="codemode-mcp", error="invalid_token", error_description="the bearer token is not this server's"`, "not this server's"},
		} {
			h := jsonHeaders()
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			resp := req{method: "POST", path: server.PathMCP, body: initBody, header: h}.do(t, nil, base)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != tc.wantHeader || !strings.Contains(string(b), tc.wantBody) {
				t.Errorf("Authorization %q: %d, WWW-Authenticate %q, body %q; want 401, %q, a body saying %q", tc.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b, tc.wantHeader, tc.wantBody)
			}
		}
	}
}

// Wrong bearer tokens are limited per client address: past the limit the
// address gets 429 with Retry-After, before its token is looked at (the
// right one too, until the limit lifts); a request with no token is not a
// guess and gets its 401. Only a bounded number of lines are logged, and
// none shows a token.
func TestWrongTokensAreLimited(t *testing.T) {
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	logs := &fixture.SyncBuffer{}
	base := serve(t, newServerWith(t, server.Options{
		AuthToken:    "s3cret",
		AuthFailures: throttle.New(3, time.Minute, func() time.Time { return frozen }),
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
	}), server.TransportHTTP)
	send := func(auth string) *http.Response {
		h := jsonHeaders()
		if auth != "" {
			h["Authorization"] = auth
		}
		return req{method: "POST", path: server.PathMCP, body: initBody, header: h}.do(t, nil, base)
	}
	for i := range 3 {
		if resp := send("Bearer guess-" + string(rune('a'+i))); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	for _, auth := range []string{"Bearer guess-d", "Bearer s3cret"} {
		resp := send(auth)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" || !strings.Contains(string(b), "too many wrong bearer tokens") {
			t.Errorf("%s past the limit: %d, Retry-After %q, %q; want 429, 60 and a body saying why", auth, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	if resp := send(""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token past the limit: %d, want 401", resp.StatusCode)
	}
	logged := logs.String()
	if n := strings.Count(logged, "level=WARN"); n != 3 {
		t.Errorf("%d lines about tokens, want 3 (the limit of lines):\n%s", n, logged)
	}
	if strings.Count(logged, `msg="a wrong bearer token" remote=127.0.0.1:`) != 3 {
		t.Errorf("the log does not name each wrong token's address:\n%s", logged)
	}
	for _, secret := range []string{"guess-", "s3cret"} {
		if strings.Contains(logged, secret) {
			t.Errorf("the log shows a token (%s):\n%s", secret, logged)
		}
	}
}
