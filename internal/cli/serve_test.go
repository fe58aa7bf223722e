package cli_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// httpServe is `codemode-mcp serve --transport http` run in process on a
// free loopback port.
type httpServe struct {
	addr   string
	start  string                      // the log line that says it serves MCP
	found  map[*regexp.Regexp][]string // what startServeLogging waited for
	cancel context.CancelFunc
	done   chan int    // Main's exit code
	rest   chan string // all of stderr, once Main returned

	once   sync.Once
	code   int
	logged string
}

// servingMCP matches serve's "serving MCP" line (text format), with its
// address.
var servingMCP = regexp.MustCompile(`msg="serving MCP".* addr=(\S+)`)

// startServe runs serve with args and waits for its "serving MCP" line.
func startServe(t *testing.T, args ...string) *httpServe {
	t.Helper()
	return startServeLogging(t, []*regexp.Regexp{servingMCP}, args...)
}

// startServeLogging runs serve with args and waits until it logged a line
// matching each of lines, which must include a pattern whose first group
// is the address of "serving MCP"; s.found has their matches.
func startServeLogging(t *testing.T, lines []*regexp.Regexp, args ...string) *httpServe {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &httpServe{cancel: cancel, done: make(chan int, 1), rest: make(chan string, 1), found: map[*regexp.Regexp][]string{}}
	go func() {
		code := cli.Main(ctx, append([]string{"serve", "--transport", "http", "--addr", "127.0.0.1:0"}, args...), cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: pw})
		pw.Close()
		s.done <- code
	}()
	sc := bufio.NewScanner(pr)
	var seen []string
	for len(s.found) < len(lines) && sc.Scan() {
		seen = append(seen, sc.Text())
		for i, re := range lines {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && s.found[re] == nil {
				s.found[re] = m
				if i == 0 {
					s.addr, s.start = m[1], sc.Text()
				}
			}
		}
	}
	go func() {
		b, _ := io.ReadAll(pr)
		s.rest <- strings.Join(seen, "\n") + "\n" + string(b)
	}()
	t.Cleanup(func() { s.stop() })
	if s.addr == "" {
		code, logged := s.stop()
		t.Fatalf("serve did not start (exit %d):\n%s", code, logged)
	}
	return s
}

// stop cancels serve, waits for it and returns its exit code and all it
// logged.
func (s *httpServe) stop() (int, string) {
	s.once.Do(func() {
		s.cancel()
		s.code = <-s.done
		s.logged = <-s.rest
	})
	return s.code, s.logged
}

// status sends a request and returns its status.
func status(t *testing.T, method, url, token string, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// CODEMODE_TOKEN is the token of `serve --transport http` without a config
// file, and with one that sets no auth_token: the MCP endpoint and the
// console require it, and the start-up log says which authentication is in
// force without showing the token. Without any token the log says none.
func TestServeTakesTheTokenFromTheEnvironment(t *testing.T) {
	const token = "env-token-3c9f1e7a"
	dir := t.TempDir()
	noToken := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(noToken, []byte("approvals:\n  elicitation: false\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEMODE_CONFIG", "")
	for _, tt := range []struct {
		name string
		env  string
		args []string
		auth string
	}{
		{"no config file", token, nil, `auth="bearer token from CODEMODE_TOKEN"`},
		{"a config file without auth_token", token, []string{"--config", noToken}, `auth="bearer token from CODEMODE_TOKEN"`},
		{"no token at all", "", []string{"--config", noToken}, "auth=none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CODEMODE_TOKEN", tt.env)
			s := startServe(t, append([]string{"--db", filepath.Join(t.TempDir(), "c.db")}, tt.args...)...)
			if !strings.Contains(s.start, tt.auth) {
				t.Errorf("start-up line %q does not say %s", s.start, tt.auth)
			}
			mcp, console := "http://"+s.addr+"/mcp", "http://"+s.addr+"/"
			if tt.env == "" {
				if got := status(t, "POST", mcp, "", initialize); got != http.StatusOK {
					t.Errorf("initialize without a token, none configured: %d, want 200", got)
				}
			} else {
				for _, c := range []struct {
					what, method, url, token, body string
					want                           int
				}{
					{"initialize without the token", "POST", mcp, "", initialize, http.StatusUnauthorized},
					{"initialize with another token", "POST", mcp, "not-" + token, initialize, http.StatusUnauthorized},
					{"initialize with the token", "POST", mcp, token, initialize, http.StatusOK},
					{"the console without a login", "GET", console, "", "", http.StatusUnauthorized},
				} {
					if got := status(t, c.method, c.url, c.token, c.body); got != c.want {
						t.Errorf("%s: %d, want %d", c.what, got, c.want)
					}
				}
			}
			code, logged := s.stop()
			if code != cli.ExitOK {
				t.Errorf("serve exited %d:\n%s", code, logged)
			}
			if tt.env != "" && strings.Contains(logged, token) {
				t.Errorf("the log shows the token:\n%s", logged)
			}
		})
	}
}
