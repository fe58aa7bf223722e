package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// protected starts the fixture MCP server over streamable HTTP (or SSE)
// behind the test authorization server, and returns the authorization
// server and the URL of the protected MCP endpoint.
func protected(t *testing.T, sse bool) (*oauthtest.Server, string) {
	t.Helper()
	target, err := url.Parse(fixture.StartHTTP(t, sse))
	if err != nil {
		t.Fatal(err)
	}
	f := oauthtest.New(t)
	f.Next = fixture.Proxy(t, target.String())
	f.PRMResource = f.RS.URL // the whole origin: /mcp, /sse and /message
	return f, f.RS.URL + target.Path
}

// tokenStore is a SQLite store for grants, shared by the sessions a test
// opens on it (one per "process").
type tokenStore struct {
	t    *testing.T
	path string
	seal *oauth.Sealer
}

func newTokenStore(t *testing.T) *tokenStore {
	seal, err := oauth.NewSealer(bytes.Repeat([]byte{9}, oauth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return &tokenStore{t: t, path: filepath.Join(t.TempDir(), "tokens.db"), seal: seal}
}

// session is the OAuth client of server on a handle of its own on the
// store; the connector that gets it closes it.
func (ts *tokenStore) session(server string) *oauth.Session {
	ts.t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Clean(ts.path), sqlite.Options{})
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { st.Close() })
	s, err := oauth.New(oauth.Config{Connector: "remote", Server: server, Store: st, Sealer: ts.seal, Logger: testLogger(ts.t)})
	if err != nil {
		ts.t.Fatal(err)
	}
	return s
}

// openRemote opens a connector for the protected server with a session on
// ts; changed receives a value when its tools change.
func openRemote(t *testing.T, ts *tokenStore, server string, sse bool) (*Connector, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 10)
	c, err := Open(context.Background(), Config{
		Name: "remote", URL: server, SSE: sse, OAuth: ts.session(server), Logger: testLogger(t),
		OnToolsChanged: func() { changed <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, changed
}

// browse plays a browser that approves at once: it follows the
// authorization URL's redirects to the loopback listener.
func browse(t *testing.T, u string) string {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// signInNow signs the connector in and waits for it to be connected.
func signInNow(t *testing.T, c *Connector) {
	t.Helper()
	ctx, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	a, err := c.BeginSignIn(ctx)
	if err != nil {
		t.Fatalf("BeginSignIn: %v", err)
	}
	defer a.Close()
	if page := browse(t, a.URL()); !strings.Contains(page, "Signed in") {
		t.Errorf("page: %s", page)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func mustNeedSignIn(t *testing.T, err error) {
	t.Helper()
	sr, ok := connectors.AsSignInRequired(err)
	if !ok || sr.Connector != "remote" {
		t.Fatalf("got %v, want a SignInRequired of connector remote", err)
	}
	if errors.Is(err, ErrDisconnected) {
		t.Errorf("a sign-in reported as a disconnection: %v", err)
	}
}

// A server that wants a sign-in: the connector reports SignInRequired
// from Tools and Call at once (no retries: the server is not asked
// again), and after a sign-in it connects, lists the tools and tells the
// app they changed.
func TestSignInBringsTheServer(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "streamable HTTP"
		if sse {
			name = "SSE"
		}
		t.Run(name, func(t *testing.T) {
			f, server := protected(t, sse)
			ts := newTokenStore(t)
			c, changed := openRemote(t, ts, server, sse)
			ctx := context.Background()
			_, err := c.Tools(ctx)
			mustNeedSignIn(t, err)
			hits := f.Hits()
			for range 3 {
				_, err = c.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
				mustNeedSignIn(t, err)
			}
			if f.Hits() != hits {
				t.Errorf("calls that need a sign-in reached the server (%d → %d requests)", hits, f.Hits())
			}
			if sr, err := c.NeedsSignIn(ctx); sr == nil || err != nil {
				t.Errorf("NeedsSignIn: %v, %v", sr, err)
			}
			signInNow(t, c)
			select {
			case <-changed:
			default:
				t.Error("OnToolsChanged was not called after the sign-in")
			}
			tools, err := c.Tools(ctx)
			if err != nil || len(tools) == 0 {
				t.Fatalf("Tools after the sign-in: %d, %v", len(tools), err)
			}
			res, err := c.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
			if err != nil || res.IsError {
				t.Fatalf("Call after the sign-in: %+v, %v", res, err)
			}
			if sr, err := c.NeedsSignIn(ctx); sr != nil || err != nil {
				t.Errorf("NeedsSignIn after the sign-in: %v, %v", sr, err)
			}
		})
	}
}

// A sign-in while the SSE stream of the session is lost (the session
// ended, and no call has noticed yet) replaces the session the one way
// every other path does: the lost one is retired and counts as a failure
// for the restart backoff, as it would had a call noticed it.
func TestSignInReplacesALostSession(t *testing.T) {
	f, server := protected(t, true)
	ts := newTokenStore(t)
	rec := &recorder{}
	c, err := Open(context.Background(), Config{Name: "remote", URL: server, SSE: true, OAuth: ts.session(server),
		Logger: slog.New(rec), RestartDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	signInNow(t, c)
	from := rec.count()
	f.RS.CloseClientConnections()
	rec.await(t, from, func(r map[string]string) bool { return r["msg"] == "the connection to the MCP server was lost" })
	signInNow(t, c)
	got := rec.await(t, from, func(r map[string]string) bool { return r["msg"] == "reconnected to the MCP server" })
	if got["failures"] != "1" {
		t.Errorf("the reconnection after a lost stream counted %s failures, want 1", got["failures"])
	}
	if res, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"hi"}`)); err != nil || res.IsError {
		t.Fatalf("Call after the sign-in: %+v, %v", res, err)
	}
}

// Tokens revoked at the server: the next call needs a sign-in (the run
// would pause) instead of failing as a disconnection, the tools stay
// known, and a sign-in in another process brings the calls back.
func TestRevokedTokensNeedASignIn(t *testing.T) {
	f, server := protected(t, false)
	f.Rotate = true
	ts := newTokenStore(t)
	c, _ := openRemote(t, ts, server, false)
	signInNow(t, c)
	ctx := context.Background()
	f.RevokeAll()
	_, err := c.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
	mustNeedSignIn(t, err)
	if tools, err := c.Tools(ctx); err != nil || len(tools) == 0 {
		t.Errorf("Tools after the revocation: %d, %v", len(tools), err)
	}
	// Another process (another connector on the same store) signs in.
	other, _ := openRemote(t, ts, server, false)
	if sr, err := other.NeedsSignIn(ctx); sr == nil || err != nil {
		t.Fatalf("the other process: NeedsSignIn %v, %v", sr, err)
	}
	signInNow(t, other)
	if sr, err := c.NeedsSignIn(ctx); sr != nil || err != nil {
		t.Errorf("NeedsSignIn after another process signed in: %v, %v", sr, err)
	}
	if res, err := c.Call(ctx, "echo", json.RawMessage(`{"message":"again"}`)); err != nil || res.IsError {
		t.Fatalf("Call after another process signed in: %+v, %v", res, err)
	}
}

// Signed in by another process while this connector waited: its next
// call connects, without a sign-in of its own.
func TestSignInOfAnotherProcess(t *testing.T) {
	_, server := protected(t, false)
	ts := newTokenStore(t)
	c, _ := openRemote(t, ts, server, false)
	if c.Capabilities().SignIner != c {
		t.Error("a connector given OAuth has no sign-in in its capabilities")
	}
	ctx := context.Background()
	_, err := c.Tools(ctx)
	mustNeedSignIn(t, err)
	other, _ := openRemote(t, ts, server, false)
	signInNow(t, other)
	if res, err := c.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`)); err != nil || res.IsError {
		t.Fatalf("Call: %+v, %v", res, err)
	}
	if tools, err := c.Tools(ctx); err != nil || len(tools) == 0 {
		t.Fatalf("Tools: %d, %v", len(tools), err)
	}
}

// Dial (which does not wait for a server) reports the sign-in as its
// error; a stdio connector does not sign in.
func TestDialNeedsSignIn(t *testing.T) {
	_, server := protected(t, false)
	ts := newTokenStore(t)
	_, err := Dial(context.Background(), Config{Name: "remote", URL: server, OAuth: ts.session(server), Logger: testLogger(t)})
	mustNeedSignIn(t, err)
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	if c.Capabilities().SignIner != nil {
		t.Error("a stdio connector's capabilities include a sign-in")
	}
	if _, err := c.BeginSignIn(context.Background()); !errors.Is(err, errNoSignIn) {
		t.Errorf("BeginSignIn of a stdio connector: %v", err)
	}
	if sr, err := c.NeedsSignIn(context.Background()); sr != nil || err != nil {
		t.Errorf("NeedsSignIn of a stdio connector: %v, %v", sr, err)
	}
}

// Elicit answers a server's request for input; the call that asked gets
// the answer.
func TestElicit(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cfg := tr.config(t)
			asked := make(chan string, 1)
			cfg.Elicit = func(_ context.Context, message string, schema json.RawMessage) (string, map[string]any, error) {
				asked <- message
				return "accept", map[string]any{}, nil
			}
			c := dial(t, cfg)
			res, err := c.Call(context.Background(), "ask", json.RawMessage(`{}`))
			if err != nil || res.IsError || !strings.Contains(string(res.Value), "accept") {
				t.Fatalf("Call(ask) = %+v, %v", res, err)
			}
			if got := <-asked; got != "Proceed?" {
				t.Errorf("the question was %q", got)
			}
		})
	}
}

// tokenServer starts the fixture MCP server over streamable HTTP behind a
// server that wants the static token "right" (no OAuth: every other path
// is a 404), answering any other request 401 with a Bearer challenge
// whose description echoes the Authorization header it got; except that
// it answers 403 insufficient_scope to every request with the token
// "narrow", and to the tools/call requests with the token "partial",
// whose other requests it serves.
func tokenServer(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(fixture.StartHTTP(t, false))
	if err != nil {
		t.Fatal(err)
	}
	next := fixture.Proxy(t, target.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch {
		case r.URL.Path != target.Path:
			http.NotFound(w, r)
		case token == "Bearer narrow", token == "Bearer partial" && bytes.Contains(body, []byte(`"method":"tools/call"`)):
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="write", error_description="the token cannot write"`)
			w.WriteHeader(http.StatusForbidden)
		case token == "Bearer right", token == "Bearer partial":
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+cmp.Or(r.Header.Get("Authorization"), "no token")+` is not accepted"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + target.Path
}

// A server that wants a static token, and offers no OAuth, is not one to
// sign in to: the connector is unavailable (not waiting for a sign-in)
// with an error saying the server refused without a usable sign-in, what
// it said, and to configure the token; a configured token it refuses is
// said to be the configured credentials, with the server's words
// scrubbed; the right token lists the tools.
func TestStaticTokenServer(t *testing.T) {
	server := tokenServer(t)
	open := func(cfg Config) *Connector {
		t.Helper()
		cfg.Name, cfg.URL, cfg.Logger = "remote", server, testLogger(t)
		c, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	ts := newTokenStore(t)
	c := open(Config{OAuth: ts.session(server)})
	_, err := c.Tools(context.Background())
	if _, ok := connectors.AsSignInRequired(err); ok || !errors.Is(err, oauth.ErrNoSignIn) ||
		!strings.Contains(err.Error(), "no token is not accepted") || !strings.Contains(err.Error(), `headers: {Authorization: "Bearer ${TOKEN}"}`) {
		t.Fatalf("Tools without a token: %v\nwant ErrNoSignIn quoting the server and naming the headers, not a sign-in", err)
	}
	if sr, err := c.NeedsSignIn(context.Background()); sr != nil || err != nil {
		t.Errorf("NeedsSignIn = %v, %v, want none", sr, err)
	}

	sc := scrub.New("wrong-secret-token")
	c = open(Config{Headers: map[string]string{"Authorization": "Bearer wrong-secret-token"}, Scrubber: sc, TokenHint: "pass --header"})
	_, err = c.Tools(context.Background())
	if msg := fmt.Sprint(err); !errors.Is(err, errCredentialsRefused) || !strings.Contains(msg, "invalid_token: Bearer") ||
		strings.Contains(msg, "wrong-secret-token") || !strings.HasSuffix(msg, "; pass --header") {
		t.Fatalf("Tools with a wrong token: %v\nwant the configured credentials refused, the server's words scrubbed, the hint", err)
	}

	c = open(Config{Headers: map[string]string{"Authorization": "Bearer right"}})
	if tools, err := c.Tools(context.Background()); err != nil || len(tools) == 0 {
		t.Fatalf("Tools with the right token: %d tools, %v", len(tools), err)
	}
}

// A server that refuses the configured credentials is tried again at the
// longest restart delay, not the shortest: sooner it would refuse them
// again, each request a log line and maybe a count against them.
func TestRefusedCredentialsWaitTheLongestDelay(t *testing.T) {
	rec := &recorder{}
	c := open(t, Config{Name: "remote", URL: tokenServer(t), Headers: map[string]string{"Authorization": "Bearer wrong"},
		RestartDelay: time.Millisecond, MaxRestartDelay: time.Hour, Logger: slog.New(rec)})
	if err := c.Down(); !errors.Is(err, errCredentialsRefused) {
		t.Fatalf("Down() = %v, want the credentials refused", err)
	}
	waiting := rec.await(t, 0, func(r map[string]string) bool { return r["msg"] == "waiting before the MCP server is reconnected" })
	if d, err := time.ParseDuration(waiting["delay"]); err != nil || d < 59*time.Minute {
		t.Errorf("the next try waits %s, want the longest delay, 1h", waiting["delay"])
	}
}

// A server that answers 403 to the configured credentials refuses them
// too: they lack a permission it wants. Refused at start, the connector
// is down with an error saying so, what the server said and what to do,
// and tried again at the longest restart delay (it was taken for a legacy
// SSE server, "server returned 4xx for initialize POST", and retried at
// the shortest). Refused for one call, that call fails alone, saying so,
// and the session is kept (it was taken for a transport failure, which
// retired the session).
func TestForbiddenCredentials(t *testing.T) {
	server := tokenServer(t)
	rec := &recorder{}
	c := open(t, Config{Name: "remote", URL: server, Headers: map[string]string{"Authorization": "Bearer narrow"},
		RestartDelay: time.Millisecond, MaxRestartDelay: time.Hour, Logger: slog.New(rec)})
	err := c.Down()
	if msg := fmt.Sprint(err); !errors.Is(err, errCredentialsRefused) || !strings.Contains(msg, "403 Forbidden: insufficient_scope: the token cannot write") ||
		!strings.Contains(msg, "give them the permission (scope) the server asks for") {
		t.Fatalf("Down() = %v\nwant the credentials refused (403), the server's words, what to do", err)
	}
	waiting := rec.await(t, 0, func(r map[string]string) bool { return r["msg"] == "waiting before the MCP server is reconnected" })
	if d, err := time.ParseDuration(waiting["delay"]); err != nil || d < 59*time.Minute {
		t.Errorf("the next try waits %s, want the longest delay, 1h", waiting["delay"])
	}

	c = dial(t, Config{Name: "remote", URL: server, Headers: map[string]string{"Authorization": "Bearer partial"}})
	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	_, err = c.Call(context.Background(), "echo", json.RawMessage(`{"message":"hi"}`))
	if msg := fmt.Sprint(err); !errors.Is(err, errCredentialsRefused) || !strings.Contains(msg, `"remote": call echo: `) || !strings.Contains(msg, "the token cannot write") {
		t.Errorf("Call = %v\nwant the call refused (403), naming the connector and the tool, with the server's words", err)
	}
	c.mu.RLock()
	kept := c.sess == s && s.alive()
	c.mu.RUnlock()
	if !kept {
		t.Errorf("a 403 to one call ended the session")
	}
}
