package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// metricsStub stands for the metrics handler: it answers who got through.
func metricsStub() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Metrics", "yes")
		io.WriteString(w, "codemode_runs_total 0\n")
	})
}

// /metrics takes the transport's authentication: the bearer token, or
// under an issuer an access token with codemode:admin; the console beside
// it does not get its path.
func TestMetricsBehindTheTransportsAuthentication(t *testing.T) {
	t.Run("bearer token", func(t *testing.T) {
		base := serve(t, newServerWith(t, server.Options{AuthToken: "tok", Console: consoleStub(), Metrics: metricsStub()}), server.TransportHTTP)
		for _, tc := range []struct {
			what, method, token string
			want                int
		}{
			{"no token", "GET", "", http.StatusUnauthorized},
			{"another token", "GET", "not-tok", http.StatusUnauthorized},
			{"the token", "GET", "tok", http.StatusOK},
			{"a POST", "POST", "tok", http.StatusMethodNotAllowed},
		} {
			h := map[string]string{}
			if tc.token != "" {
				h["Authorization"] = "Bearer " + tc.token
			}
			resp := req{method: tc.method, path: server.PathMetrics, header: h}.do(t, nil, base)
			if resp.StatusCode != tc.want || resp.Header.Get("X-Console") != "" || (tc.want == http.StatusOK) != (resp.Header.Get("X-Metrics") != "") {
				t.Errorf("%s: %d (console %q, metrics %q), want %d", tc.what, resp.StatusCode, resp.Header.Get("X-Console"), resp.Header.Get("X-Metrics"), tc.want)
			}
		}
		// A page of another origin is refused before its token is looked at.
		resp := req{method: "GET", path: server.PathMetrics, header: map[string]string{"Authorization": "Bearer tok", "Origin": "https://evil.example"}}.do(t, nil, base)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("from another origin: %d, want 403", resp.StatusCode)
		}
	})
	t.Run("issuer", func(t *testing.T) {
		as := oauthtest.New(t)
		auth := config.ServerAuth{Issuer: as.Issuer()}
		base := serve(t, newServerWith(t, server.Options{Auth: &auth, Console: consoleStub(), Metrics: metricsStub()}), server.TransportHTTP)
		res := base + server.PathMCP
		token := func(scope string) string { return as.SignJWT("RS256", map[string]any{"aud": res, "scope": scope}) }
		for _, tc := range []struct {
			scope string
			want  int
		}{
			{"codemode:run", http.StatusForbidden},
			{"codemode:admin", http.StatusOK},
		} {
			resp := req{method: "GET", path: server.PathMetrics, header: map[string]string{"Authorization": "Bearer " + token(tc.scope)}}.do(t, nil, base)
			if resp.StatusCode != tc.want {
				t.Errorf("/metrics with %s: %d, want %d", tc.scope, resp.StatusCode, tc.want)
			}
		}
	})
}
