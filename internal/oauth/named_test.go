package oauth

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// remoteFetcher is a Fetcher that reaches "https://example.com:port" (a
// name the TLS test server's certificate holds, and not a loopback name)
// at srv, so that srv stands for a remote downstream; every other address
// is dialled as it is.
func remoteFetcher(t *testing.T, srv *httptest.Server) *Fetcher {
	t.Helper()
	f := NewFetcher(5 * time.Second)
	t.Cleanup(f.Close)
	tr := f.client.Transport.(*http.Transport)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "example.com:") {
			addr = srv.Listener.Addr().String()
		}
		return d.DialContext(ctx, network, addr)
	}
	return f
}

// A remote downstream (https, not on this machine) cannot make discovery
// reach plain-http ports of this machine: not by its challenge's
// resource_metadata, its metadata's authorization server, the issuer's
// endpoints, nor a redirect. The refusal names the URL without its query
// and says why; the local port is never asked.
func TestRemoteServerCannotNameLocalHTTP(t *testing.T) {
	var localHits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		localHits.Add(1)
		http.Error(w, "local service", http.StatusNotFound)
	}))
	defer local.Close()
	target := local.URL + "/internal/admin?secret=q-7f3a"

	for _, tt := range []struct {
		name      string
		challenge string                             // the challenge's resource_metadata, "" for none
		answer    func(origin string) map[string]any // the remote's documents by path
		want      string
	}{
		{"resource_metadata in the challenge", target, nil, "the resource_metadata URL"},
		{"authorization server in the resource metadata", "", func(origin string) map[string]any {
			return map[string]any{"/.well-known/oauth-protected-resource/mcp": map[string]any{
				"resource": origin + "/mcp", "authorization_servers": []string{local.URL + "/internal/admin"}}}
		}, "the issuer"},
		{"token endpoint of the issuer's metadata", "", func(origin string) map[string]any {
			return map[string]any{
				"/.well-known/oauth-protected-resource/mcp": map[string]any{"resource": origin + "/mcp", "authorization_servers": []string{origin + "/as"}},
				"/.well-known/oauth-authorization-server/as": map[string]any{"issuer": origin + "/as",
					"authorization_endpoint": origin + "/as/authorize", "token_endpoint": target, "code_challenge_methods_supported": []string{"S256"}},
			}
		}, "the token endpoint"},
		{"2025-03-26 metadata at the server's origin", "", func(origin string) map[string]any {
			return map[string]any{"/.well-known/oauth-authorization-server": map[string]any{"issuer": origin,
				"authorization_endpoint": origin + "/authorize", "token_endpoint": origin + "/token", "registration_endpoint": target}}
		}, "the registration endpoint"},
		{"a redirect", "", func(origin string) map[string]any {
			return map[string]any{"/.well-known/oauth-protected-resource/mcp": target}
		}, "a redirect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var origin string
			remote := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var doc any
				if tt.answer != nil {
					doc = tt.answer(origin)[r.URL.Path]
				}
				switch doc := doc.(type) {
				case nil:
					http.NotFound(w, r)
				case string:
					http.Redirect(w, r, doc, http.StatusFound)
				default:
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(doc)
				}
			}))
			defer remote.Close()
			origin = "https://example.com:" + remote.URL[strings.LastIndex(remote.URL, ":")+1:]
			f := remoteFetcher(t, remote)
			before := localHits.Load()
			_, err := f.discover(context.Background(), origin+"/mcp", bearer{found: true, resourceMetadata: tt.challenge})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "plain http") ||
				!strings.Contains(err.Error(), local.URL+"/internal/admin") {
				t.Fatalf("discover: %v, want a refusal of %s naming %s", err, tt.want, local.URL)
			}
			if strings.Contains(err.Error(), "q-7f3a") {
				t.Errorf("the refusal shows the URL's query: %v", err)
			}
			if n := localHits.Load() - before; n != 0 {
				t.Errorf("the local port was asked %d times", n)
			}
		})
	}
}

// A server on this machine may name plain-http loopback URLs (a local
// server naming a local issuer, as in development), and an issuer the
// configuration names on loopback may publish loopback endpoints.
func TestLocalServerMayNameLocalHTTP(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		docs := map[string]any{
			"/prm": map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL + "/as"}},
			"/.well-known/oauth-authorization-server/as": map[string]any{"issuer": srv.URL + "/as",
				"authorization_endpoint": srv.URL + "/as/authorize", "token_endpoint": srv.URL + "/as/token"},
		}
		switch doc, ok := docs[r.URL.Path]; {
		case r.URL.Path == "/moved":
			http.Redirect(w, r, srv.URL+"/prm", http.StatusFound)
		case ok:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := NewFetcher(5 * time.Second)
	defer f.Close()
	d, err := f.discover(context.Background(), srv.URL+"/mcp", bearer{found: true, resourceMetadata: srv.URL + "/moved"})
	if err != nil || d.meta.TokenEndpoint != srv.URL+"/as/token" {
		t.Fatalf("discover: %+v, %v", d, err)
	}
	if _, err := f.Issuer(context.Background(), srv.URL+"/as"); err != nil {
		t.Fatalf("Issuer: %v", err)
	}
}

// A grant stored before discovery refused plain-http loopback endpoints
// named by a remote server keeps those endpoints: they are checked again
// when used. Its refresh is refused (a sign-in is needed, which discovers
// again) and its sign-out revokes nothing, and the local port is never
// asked, with the refresh token or anything else.
func TestAStoredGrantsLocalEndpointsAreCheckedOnUse(t *testing.T) {
	var localHits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		localHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-2", "token_type": "Bearer"})
	}))
	defer local.Close()
	e := newEnv(t)
	s := e.session(nil, Config{Server: "https://mcp.example.com/mcp"})
	now := e.clock.Now()
	old := &grant{Server: s.server, Resource: s.server, TokenEndpoint: local.URL + "/token", RevocationEndpoint: local.URL + "/revoke",
		ClientID: "c-1", AuthMethod: authNone, AccessToken: "at-1", RefreshToken: "rt-1", Obtained: now.Add(-2 * time.Hour), Expiry: now.Add(-time.Hour)}
	ctx := context.Background()
	if err := s.vault.put(ctx, KindGrant, s.id, old); err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.vault.put(ctx, KindGrant, s.id, old); err != nil {
		t.Fatal(err)
	}
	_, err := s.accessToken(ctx)
	if sr, ok := connectors.AsSignInRequired(err); !ok || !strings.Contains(sr.Reason, "token endpoint") || !strings.Contains(sr.Reason, "plain http") {
		t.Errorf("refreshing the stored grant: %v; want a sign-in required, saying why the token endpoint is refused", err)
	}
	if n := localHits.Load(); n != 0 {
		t.Errorf("the stored grant's local endpoints were asked %d times", n)
	}
}
