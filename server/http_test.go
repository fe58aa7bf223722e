package server_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"golang.org/x/net/http2"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/server"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// serve starts s on a loopback port with transport and returns its base
// URL ("http://127.0.0.1:port"); it is shut down when the test ends.
func serve(t *testing.T, s *server.Server, transport string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, ln, transport) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// req is one HTTP request of a test; zero fields are left out.
type req struct {
	method, path, body string
	header             map[string]string
	host               string
}

func (r req) do(t *testing.T, c *http.Client, base string) *http.Response {
	t.Helper()
	hr, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func jsonHeaders(extra ...string) map[string]string {
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

// initialize opens a streamable-HTTP session and returns its id.
func initialize(t *testing.T, base string, extra ...string) string {
	t.Helper()
	resp := req{method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders(extra...)}.do(t, nil, base)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize issued no session id")
	}
	return id
}

// TestPageLikeClientsCannotDriveTheServer tries what a web page can do,
// against both transports, with and without a token: a foreign Origin, a
// foreign Host (DNS rebinding), and simple (no-preflight) text/plain
// POSTs.
// With a console mounted beside the MCP endpoints, they answer the same.
func TestPageLikeClientsCannotDriveTheServer(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		for _, transport := range []string{server.TransportHTTP, server.TransportSSE} {
			for _, withConsole := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s token=%q console=%v", transport, token, withConsole), func(t *testing.T) {
					opts := server.Options{AuthToken: token}
					if withConsole {
						opts.Console = consoleStub()
					}
					base := serve(t, newServerWith(t, opts), transport)
					auth := map[string]string{}
					if token != "" {
						auth["Authorization"] = "Bearer " + token
					}
					with := func(h map[string]string, kv ...string) map[string]string {
						out := map[string]string{}
						for k, v := range auth {
							out[k] = v
						}
						for k, v := range h {
							out[k] = v
						}
						for i := 0; i+1 < len(kv); i += 2 {
							out[kv[i]] = kv[i+1]
						}
						return out
					}
					post := server.PathMCP
					if transport == server.TransportSSE {
						post = server.PathMessage + "?sessionId=anything"
					}
					cases := []struct {
						name string
						r    req
						want int
					}{
						{"foreign origin GET", req{method: "GET", path: pathFor(transport), header: with(nil, "Origin", "http://evil.example", "Accept", "text/event-stream")}, http.StatusForbidden},
						{"foreign origin POST", req{method: "POST", path: post, body: initBody, header: with(jsonHeaders(), "Origin", "http://evil.example")}, http.StatusForbidden},
						{"null origin", req{method: "POST", path: post, body: initBody, header: with(jsonHeaders(), "Origin", "null")}, http.StatusForbidden},
						{"text/plain POST", req{method: "POST", path: post, body: initBody, header: with(map[string]string{"Content-Type": "text/plain"})}, http.StatusUnsupportedMediaType},
						{"form POST", req{method: "POST", path: post, body: "a=b", header: with(map[string]string{"Content-Type": "application/x-www-form-urlencoded"})}, http.StatusUnsupportedMediaType},
						{"rebound host", req{method: "POST", path: post, body: initBody, host: "evil.example:1234", header: with(jsonHeaders())}, http.StatusForbidden},
						{"preflight", req{method: "OPTIONS", path: post, header: with(nil, "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")}, http.StatusForbidden},
					}
					for _, tc := range cases {
						resp := tc.r.do(t, nil, base)
						if resp.StatusCode != tc.want {
							b, _ := io.ReadAll(resp.Body)
							t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, b)
						}
						if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
							t.Errorf("%s: Access-Control-Allow-Origin %q", tc.name, got)
						}
					}
				})
			}
		}
	}
}

// consoleStub stands for the approval console: it answers every request
// "console" (its own rules are package console's).
func consoleStub() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Console", "yes")
		_, _ = io.WriteString(w, "console "+r.URL.Path)
	})
}

// The guard sends every path but the MCP endpoints to the console, after
// the Host check and without the MCP rules (the console has its own).
func TestConsoleBesideTheMCPEndpoints(t *testing.T) {
	for _, transport := range []string{server.TransportHTTP, server.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			base := serve(t, newServerWith(t, server.Options{AuthToken: "s3cret", Console: consoleStub()}), transport)
			other := server.PathMCP
			if transport == server.TransportHTTP {
				other = server.PathSSE
			}
			for _, tc := range []struct {
				name        string
				r           req
				want        int
				wantConsole bool
			}{
				{"root", req{method: "GET", path: "/"}, http.StatusOK, true},
				{"a page", req{method: "GET", path: "/runs/exec_1"}, http.StatusOK, true},
				{"a form post", req{method: "POST", path: "/runs/exec_1/approve", body: "csrf=x", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, http.StatusOK, true},
				{"the other transport's path", req{method: "GET", path: other}, http.StatusOK, true},
				{"rebound host", req{method: "GET", path: "/", host: "evil.example"}, http.StatusForbidden, false},
				{"MCP without the token", req{method: "POST", path: pathFor(transport), body: initBody, header: jsonHeaders()}, http.StatusUnauthorized, false},
				{"MCP text/plain", req{method: "POST", path: pathFor(transport), body: initBody, header: map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer s3cret"}}, http.StatusUnsupportedMediaType, false},
			} {
				resp := tc.r.do(t, nil, base)
				if resp.StatusCode != tc.want || (resp.Header.Get("X-Console") == "yes") != tc.wantConsole {
					b, _ := io.ReadAll(resp.Body)
					t.Errorf("%s: %d console=%q (%s), want %d console=%v", tc.name, resp.StatusCode, resp.Header.Get("X-Console"), b, tc.want, tc.wantConsole)
				}
			}
		})
	}
}

func pathFor(transport string) string {
	if transport == server.TransportSSE {
		return server.PathSSE
	}
	return server.PathMCP
}

// TestSSEStreamHasNoWildcardCORS: the legacy SSE transport would allow
// every origin to read its stream (and so the session id).
func TestSSEStreamHasNoWildcardCORS(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{}), server.TransportSSE)
	resp := req{method: "GET", path: server.PathSSE, header: map[string]string{"Accept": "text/event-stream"}}.do(t, nil, base)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse: %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: endpoint") {
		t.Errorf("first line %q, %v; want the endpoint event", line, err)
	}
}

func TestOriginsAndHostsThatAreAllowed(t *testing.T) {
	// Read as a file writes them: the origin's explicit default port, which
	// a browser's Origin never carries, must not keep it out.
	cfg, err := config.Parse([]byte(`server: {allowed_origins: ["https://app.example.com:443"], allowed_hosts: [mcp.example.com, "gw.lan:9000"]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	s := newServerWith(t, server.Options{HTTP: cfg.Server.HTTP})
	base := serve(t, s, server.TransportHTTP)
	ok := []struct {
		name          string
		origin, host  string
		wantAllowOrig string
	}{
		{"no origin", "", "", ""},
		{"loopback origin", "http://localhost:6274", "", ""},
		{"loopback IP origin", "http://127.0.0.1:3000", "", ""},
		{"configured origin", "https://app.example.com", "", "https://app.example.com"},
		{"allowed host", "", "mcp.example.com", ""},
		{"allowed host with its port", "", "gw.lan:9000", ""},
		{"IP literal host", "", "192.0.2.7:8931", ""},
		{"localhost host", "", "localhost:8931", ""},
	}
	for _, tc := range ok {
		h := jsonHeaders()
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		resp := req{method: "POST", path: server.PathMCP, body: initBody, header: h, host: tc.host}.do(t, nil, base)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: status %d (%s), want 200", tc.name, resp.StatusCode, b)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.wantAllowOrig {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", tc.name, got, tc.wantAllowOrig)
		}
	}
	for _, host := range []string{"gw.lan:9001", "other.example.com", "mcp.example.com.evil.example"} {
		resp := req{method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders(), host: host}.do(t, nil, base)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("host %s: status %d, want 403", host, resp.StatusCode)
		}
	}
	// A configured origin's CORS preflight is answered (without a token).
	resp := req{method: "OPTIONS", path: server.PathMCP, header: map[string]string{
		"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
	}}.do(t, nil, base)
	if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("preflight: %d, Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{AuthToken: "s3cret"}), server.TransportHTTP)
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer s3cre", http.StatusUnauthorized},
		{"Basic s3cret", http.StatusUnauthorized},
		{"Bearers3cret", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusOK},
		{"bearer s3cret", http.StatusOK},
		{"BEARER  s3cret ", http.StatusOK},
	} {
		h := jsonHeaders()
		if tc.auth != "" {
			h["Authorization"] = tc.auth
		}
		resp := req{method: "POST", path: server.PathMCP, body: initBody, header: h}.do(t, nil, base)
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
}

func TestBodyIsCapped(t *testing.T) {
	for _, transport := range []string{server.TransportHTTP, server.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			base := serve(t, newServerWith(t, server.Options{HTTP: config.HTTP{MaxBody: 1 << 16}}), transport)
			big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 1<<17) + `"}}`
			path := pathFor(transport)
			if transport == server.TransportSSE {
				path = server.PathMessage + "?sessionId=x"
			}
			// With a Content-Length, refused before reading.
			resp := req{method: "POST", path: path, body: big, header: jsonHeaders()}.do(t, nil, base)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("declared large body: status %d, want 413", resp.StatusCode)
			}
			// Chunked, without one: refused once the cap is passed.
			hr, _ := http.NewRequest("POST", base+path, io.MultiReader(strings.NewReader(big)))
			hr.ContentLength = -1
			for k, v := range jsonHeaders() {
				hr.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("chunked large body: status %d, want 413", resp.StatusCode)
			}
		})
	}
}

// TestTrickledBodyTimesOut: a client that sends its body too slowly is
// answered 408 once the read timeout passes, not held indefinitely.
func TestTrickledBodyTimesOut(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{HTTP: config.HTTP{ReadTimeout: 300 * time.Millisecond}}), server.TransportHTTP)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	// Held without the read timeout, the request would get no answer:
	// the test gives up on it at its own deadline.
	_ = conn.SetReadDeadline(fixture.Deadline(t))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("status %d, want 408", resp.StatusCode)
	}
}

// TestStreamableSessions: requests other than initialize need a session
// this server issued and has not ended.
func TestStreamableSessions(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{}), server.TransportHTTP)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"1"}}}`
	post := func(body string, kv ...string) *http.Response {
		return req{method: "POST", path: server.PathMCP, body: body, header: jsonHeaders(append(kv, "Mcp-Protocol-Version", "2025-11-25")...)}.do(t, nil, base)
	}
	if got := post(call).StatusCode; got != http.StatusBadRequest {
		t.Errorf("tools/call without a session: %d, want 400", got)
	}
	if got := post(call, "Mcp-Session-Id", "mcp-session-4f0e6c2a-7b1d-4c3e-9a8f-0123456789ab").StatusCode; got != http.StatusNotFound {
		t.Errorf("tools/call with a made-up session: %d, want 404", got)
	}
	id := initialize(t, base)
	if got := post(list, "Mcp-Session-Id", id).StatusCode; got != http.StatusOK {
		t.Errorf("tools/list in a live session: %d, want 200", got)
	}
	get := req{method: "GET", path: server.PathMCP, header: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "made-up"}}.do(t, nil, base)
	if get.StatusCode != http.StatusNotFound {
		t.Errorf("GET with a made-up session: %d, want 404", get.StatusCode)
	}
	del := req{method: "DELETE", path: server.PathMCP, header: map[string]string{"Mcp-Session-Id": id}}.do(t, nil, base)
	if del.StatusCode != http.StatusOK {
		t.Errorf("DELETE: %d", del.StatusCode)
	}
	if got := post(list, "Mcp-Session-Id", id).StatusCode; got != http.StatusNotFound {
		t.Errorf("tools/list in a deleted session: %d, want 404", got)
	}
}

func TestConnectionCap(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{HTTP: config.HTTP{MaxConnections: 2}}), server.TransportHTTP)
	addr := strings.TrimPrefix(base, "http://")
	// Two connections that send nothing hold both slots.
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr) // the kernel queues it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprintf(third, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(initBody), initBody)
	r := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := r.Peek(1); err == nil {
		t.Fatal("a third connection was served while two held the cap")
	}
	held[0].Close()
	_ = third.SetReadDeadline(fixture.Deadline(t))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the third connection was not served after a slot freed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	s := newServerWith(t, server.Options{HTTP: config.HTTP{TLSCert: certFile, TLSKey: keyFile}})
	base := serve(t, s, server.TransportHTTP)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp := req{method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders()}.do(t, c, strings.Replace(base, "http://", "https://", 1))
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Errorf("HTTPS initialize: %d (TLS %v)", resp.StatusCode, resp.TLS != nil)
	}

	// A bad pair is reported at start, naming the files.
	bad := newServerWith(t, server.Options{HTTP: config.HTTP{TLSCert: certFile, TLSKey: certFile}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = bad.ServeHTTP(context.Background(), ln, server.TransportHTTP)
	if err == nil || !strings.Contains(err.Error(), certFile) {
		t.Errorf("ServeHTTP with a bad key: %v", err)
	}
}

// TestTLSStreamsPerConnection: over TLS a client may speak HTTP/2, whose
// streams are requests served at once on one connection: the server lets
// a connection carry at most 16 (Go's default is 250), so that
// server.max_connections bounds requests too.
func TestTLSStreamsPerConnection(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	s := newServerWith(t, server.Options{HTTP: config.HTTP{TLSCert: certFile, TLSKey: keyFile}})
	base := serve(t, s, server.TransportHTTP)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "http://"), &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			if n, ok := sf.Value(http2.SettingMaxConcurrentStreams); !ok || n != 16 {
				t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d (sent: %v), want 16", n, ok)
			}
			return
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// the pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "codemode test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestWithholdApprovals(t *testing.T) {
	c := connect(t, newServerWith(t, server.Options{WithholdApprovals: true}), nil)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, withheld := range []string{"codemode_approve", "codemode_reject", "codemode_rollback"} {
		for _, n := range names {
			if n == withheld {
				t.Errorf("tools/list offers %s: %v", withheld, names)
			}
		}
	}
	if len(names) != 5 {
		t.Errorf("tools %v, want codemode, pending, executions, snippets and save_snippet", names)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "codemode_approve"
	req.Params.Arguments = map[string]any{"executionId": "exec_x"}
	if _, err := c.CallTool(context.Background(), req); err == nil {
		t.Error("calling the withheld codemode_approve succeeded")
	}
}

// A refused Host or Origin is named clipped: the answer does not repeat a
// long header.
func TestRefusedHeadersAreClipped(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{}), server.TransportHTTP)
	long := "evil.example" + strings.Repeat("x", 2000)
	for name, r := range map[string]req{
		"host":   {method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders(), host: long},
		"origin": {method: "POST", path: server.PathMCP, body: initBody, header: jsonHeaders("Origin", "https://"+long)},
	} {
		resp := r.do(t, nil, base)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || len(body) > 200 || !strings.Contains(string(body), "evil.example") {
			t.Errorf("%s: %d, %d bytes; want 403 naming it clipped\n%.300s", name, resp.StatusCode, len(body), body)
		}
	}
}

// A streamable-HTTP session the server forgets (the least recently used,
// past maxSessions) is ended in mcp-go too, as a DELETE ends it: mcp-go
// keeps a session until then, so sessions opened and abandoned would
// otherwise pile up without bound.
func TestAForgottenSessionLeavesNothingBehind(t *testing.T) {
	s := newServer(t, false)
	base := serve(t, s, server.TransportHTTP)
	first := initialize(t, base)
	if err := s.MCP().SendNotificationToSpecificClient(first, "notifications/message", nil); errors.Is(err, mcpserver.ErrSessionNotFound) {
		t.Fatalf("the session just opened is unknown to mcp-go: %v", err)
	}
	for range server.MaxSessions { // each closed at once: the connections are bounded
		r, err := http.NewRequest("POST", base+server.PathMCP, strings.NewReader(initBody))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range jsonHeaders() {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
	}
	if err := s.MCP().SendNotificationToSpecificClient(first, "notifications/message", nil); !errors.Is(err, mcpserver.ErrSessionNotFound) {
		t.Errorf("the forgotten session is still registered in mcp-go (a notification to it: %v)", err)
	}
	resp := req{method: "POST", path: server.PathMCP, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: jsonHeaders("Mcp-Session-Id", first)}.do(t, nil, base)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the forgotten session: %d, want 404", resp.StatusCode)
	}
}

// TestAProtocolHeaderIsNoWayPastTheSessionRules sends the task front's
// requests with a Mcp-Protocol-Version header of 2026-07-28 (which has no
// sessions, so the session rules pass it) over a body of an earlier
// protocol, naming a session the server never issued: mcp-go refuses such
// a message (the header and the body must agree), and so must the front,
// which would otherwise serve it on whatever session it names.
func TestAProtocolHeaderIsNoWayPastTheSessionRules(t *testing.T) {
	base := serve(t, newServer(t, false), server.TransportHTTP)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"1"},"task":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`,
	} {
		resp := req{method: "POST", path: server.PathMCP, body: body,
			header: jsonHeaders("Mcp-Protocol-Version", "2026-07-28", "Mcp-Session-Id", "mcp-session-made-up")}.do(t, nil, base)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(b), `"result"`) {
			t.Errorf("%s\nwith a modern header and a made-up session: %d %.300s, want 400 and no result", body, resp.StatusCode, b)
		}
	}
}

// TestOddMessagesOnStreamableHTTP sends what a hostile client might: a
// batch (2025-06-18 removed them; none is run), a notification (no
// answer), an id of an odd type (echoed as sent: bounded by max_body), and
// headers over the server's bound.
func TestOddMessagesOnStreamableHTTP(t *testing.T) {
	s := newServer(t, false)
	base := serve(t, s, server.TransportHTTP)
	id := initialize(t, base)
	for _, tc := range []struct {
		body   string
		header []string
		status int
		want   string // in the body ("" : empty)
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"1"}}}]`, nil, http.StatusBadRequest, `"code":-32700`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, http.StatusAccepted, ""},
		{`{"jsonrpc":"2.0","id":{"a":[1,{"b":"c"}]},"method":"ping"}`, nil, http.StatusOK, `"id":{"a":[1,{"b":"c"}]},"result":{}`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"X-Big", strings.Repeat("a", 100<<10)}, http.StatusRequestHeaderFieldsTooLarge, ""},
	} {
		resp := req{method: "POST", path: server.PathMCP, body: tc.body, header: jsonHeaders(append([]string{"Mcp-Session-Id", id}, tc.header...)...)}.do(t, nil, base)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || tc.want != "" && !strings.Contains(string(b), tc.want) || tc.status == http.StatusAccepted && len(b) > 0 {
			t.Errorf("%.100s: %d %.300s, want %d %s", tc.body, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	if runs, err := s.Engine().Executions(context.Background(), codemode.ExecutionFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("a batch ran a program: %d runs, %v", len(runs), err)
	}
}

// dropLog is a log handler that closes dropped at the first record
// saying a response could not be written in time.
type dropLog struct {
	once    *sync.Once
	dropped chan struct{}
}

func (dropLog) Enabled(context.Context, slog.Level) bool { return true }
func (h dropLog) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h dropLog) WithGroup(string) slog.Handler          { return h }

func (h dropLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if strings.Contains(a.Value.String(), "i/o timeout") {
			h.once.Do(func() { close(h.dropped) })
		}
		return true
	})
	return nil
}

// A client that reads nothing of its session's GET stream is dropped
// after server.write_timeout (its stream's writer ends), and what the
// server has for it meanwhile waits in a bounded queue: a notification
// past it is refused at once, never blocking the sender.
func TestAClientThatDoesNotReadIsDropped(t *testing.T) {
	log := dropLog{once: &sync.Once{}, dropped: make(chan struct{})}
	s := newServerWith(t, server.Options{HTTP: config.HTTP{WriteTimeout: 200 * time.Millisecond}, Logger: slog.New(log)})
	base := serve(t, s, server.TransportHTTP)
	id := initialize(t, base)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", server.PathMCP, strings.TrimPrefix(base, "http://"), id)
	// Fill the queue: its 100 notifications of 256 KiB are more than the
	// connection's buffers hold, so the stream's writer is stuck in a write.
	big := map[string]any{"data": strings.Repeat("y", 256<<10)}
	for {
		err := s.MCP().SendNotificationToSpecificClient(id, "notifications/message", big)
		if errors.Is(err, mcpserver.ErrSessionNotFound) {
			t.Fatalf("the session ended: %v", err)
		}
		if err != nil {
			break // the queue is full
		}
	}
	<-log.dropped
}
