package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
)

// testBrowserArg makes the test binary play the browser: $BROWSER names
// it, and it fetches the URL it is given and follows the redirects, as a
// person who approves at once would.
const testBrowserArg = "__test-browser"

func testBrowser(u string) int {
	resp, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		return 1
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(page, []byte("Signed in")) {
		fmt.Fprintf(os.Stderr, "test browser: %d %s\n", resp.StatusCode, page)
		return 1
	}
	return 0
}

// setBrowser makes this test binary the browser of sign-ins.
func setBrowser(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", exe+" "+testBrowserArg)
}

// protectedServer starts the fixture MCP server (streamable HTTP) behind
// the test authorization server; it returns the server and the MCP URL.
func protectedServer(t *testing.T) (*oauthtest.Server, string) {
	t.Helper()
	f := oauthtest.New(t)
	f.Next = fixture.Proxy(t, fixture.StartHTTP(t, false))
	return f, f.ServerURL()
}

// login, check, run and logout with a server that wants OAuth: check says
// it needs a sign-in without creating the store or opening a browser,
// login signs in through $BROWSER and keeps the tokens sealed in the
// store (the key file created 0600 in the state directory), check and run
// then use them, and logout forgets them.
func TestLoginCheckLogout(t *testing.T) {
	f, server := protectedServer(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("CODEMODE_SECRET_KEY", "")
	os.Unsetenv("CODEMODE_SECRET_KEY")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	db := filepath.Join(dir, "c.db")
	if err := os.WriteFile(cfg, []byte("store:\n  path: ./c.db\nconnectors:\n  remote:\n    url: "+server+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", "/nonexistent/browser-check-must-not-open")

	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure || !strings.Contains(out, "✗ remote: needs a sign-in (not signed in yet): run codemode-mcp login remote --config "+cfg) {
		t.Fatalf("check before login: %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("check created the store: %v", err)
	}

	// A run before the sign-in waits for it, and login resumes it.
	code, out, errs = run(t, "", "run", "--config", cfg, "--code", `await remote.echo({ message: "waited for the sign-in" })`)
	var waiting struct {
		Status, ExecutionID string
		Pending             []struct{ Awaits string }
	}
	if err := json.Unmarshal([]byte(out), &waiting); err != nil || code != cli.ExitOK || waiting.Status != "paused" || len(waiting.Pending) != 1 || waiting.Pending[0].Awaits != "sign_in" {
		t.Fatalf("run before login: %d %v\n%s\n%s", code, err, out, errs)
	}

	setBrowser(t)
	code, out, errs = run(t, "", "login", "remote", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, f.AS.URL+"/authorize?") || !regexp.MustCompile(`Signed in to remote \(\d+ tools\)`).MatchString(out) {
		t.Fatalf("login: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Resuming the run that waited for it:\n  "+waiting.ExecutionID+": completed") {
		t.Fatalf("login did not resume the waiting run:\n%s\n%s", out, errs)
	}
	code, out, errs = run(t, "", "executions", "show", waiting.ExecutionID, "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "waited for the sign-in") || !strings.Contains(out, `"completed"`) {
		t.Fatalf("the resumed run: %d\n%s\n%s", code, out, errs)
	}
	key := filepath.Join(state, "codemode-mcp", "secret.key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v", fi, err)
	}

	code, out, errs = run(t, "", "check", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "✓ remote: ") || !strings.Contains(out, "echo") {
		t.Fatalf("check after login: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, "", "run", "--config", cfg, "--code", `await remote.echo({ message: "through the sign-in" })`)
	if code != cli.ExitOK || !strings.Contains(out, "through the sign-in") {
		t.Fatalf("run after login: %d\n%s\n%s", code, out, errs)
	}

	// Nothing secret in the store's files, the output or the logs.
	var stored []byte
	for _, p := range []string{db, db + "-wal"} {
		b, _ := os.ReadFile(p)
		stored = append(stored, b...)
	}
	for _, sec := range f.Secrets() {
		for where, text := range map[string]string{"the store": string(stored), "stdout": out, "stderr": errs} {
			if strings.Contains(text, sec) {
				t.Errorf("%q in %s", sec, where)
			}
		}
	}

	code, out, errs = run(t, "", "logout", "remote", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "Signed out of remote") {
		t.Fatalf("logout: %d\n%s\n%s", code, out, errs)
	}
	if f.HitsOf("/revoke") == 0 {
		t.Error("logout revoked nothing")
	}
	code, out, _ = run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure || !strings.Contains(out, "needs a sign-in") {
		t.Fatalf("check after logout: %d\n%s", code, out)
	}
	code, out, _ = run(t, "", "logout", "remote", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "was not signed in") {
		t.Errorf("second logout: %d\n%s", code, out)
	}
}

func TestLoginUsage(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "codemode.yaml")
	body := "store:\n  path: ./c.db\nconnectors:\n  notes:\n    builtin: notes\n  gh:\n    url: https://example.com/mcp\n    headers: {Authorization: Bearer x}\n  remote:\n    url: https://example.org/mcp\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "--config", cfg}, "name one connector"},
		{[]string{"login", "nope", "--config", cfg}, `no connector "nope" in ` + cfg + "; url connectors: gh, remote"},
		{[]string{"login", "notes", "--config", cfg}, "connector notes is not a url connector"},
		{[]string{"logout", "gh", "--config", cfg}, "connector gh sends an Authorization header of its own"},
		{[]string{"check", "--call", "x"}, "go with --url"},
		{[]string{"check", "--url", "ftp://x"}, "wants an http(s) URL"},
	} {
		code, _, errs := run(t, "", tt.args...)
		if code != cli.ExitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}

// A configured url connector whose server wants a static token and
// offers no OAuth: check says why and to set headers (not a sign-in), a
// run does not pause for a sign-in that cannot happen, and login says why
// without registering a client.
func TestStaticTokenServerIsNoSignIn(t *testing.T) {
	f, server := protectedServer(t)
	f.NoPRM, f.NoMetadata = true, true
	t.Setenv("CODEMODE_SECRET_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	t.Setenv("BROWSER", "/nonexistent/no-browser-for-a-static-token")
	cfg := filepath.Join(t.TempDir(), "codemode.yaml")
	if err := os.WriteFile(cfg, []byte("store:\n  path: ./c.db\nconnectors:\n  remote:\n    url: "+server+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure || !strings.Contains(out, "✗ remote: ") || !strings.Contains(out, "offers no OAuth sign-in") ||
		!strings.Contains(out, `headers: {Authorization: "Bearer ${TOKEN}"}`) || strings.Contains(out, "needs a sign-in") {
		t.Fatalf("check: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, "", "run", "--config", cfg, "--code", `await remote.echo({ message: "never" })`)
	if strings.Contains(out, "sign_in") || strings.Contains(out, `"paused"`) {
		t.Fatalf("run paused for a sign-in that cannot happen: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, "", "login", "remote", "--config", cfg)
	if code == cli.ExitOK || !strings.Contains(errs, "offers no OAuth sign-in") || f.HitsOf("/register") != 0 {
		t.Fatalf("login: %d (%d registrations)\n%s\n%s", code, f.HitsOf("/register"), out, errs)
	}
}

// check --url checks a server without a config file: it signs in through
// the browser, lists the tools and calls one; with client credentials no
// browser is involved.
func TestCheckURL(t *testing.T) {
	t.Run("sign-in", func(t *testing.T) {
		_, server := protectedServer(t)
		setBrowser(t)
		code, out, errs := run(t, "", "check", "--url", server, "--call", "echo", "--args", `{"message":"checked"}`)
		if code != cli.ExitOK || !strings.Contains(out, "✓ fixture-mcpserver 1.0.0: ") || !strings.Contains(out, "checked") || !strings.Contains(out, "needs a sign-in") {
			t.Fatalf("check --url: %d\n%s\n%s", code, out, errs)
		}
		// There is no connector named remote to log in to.
		if strings.Contains(out+errs, "login remote") {
			t.Errorf("check --url advises a login that cannot work:\n%s\n%s", out, errs)
		}
	})
	// A server that wants a static token and offers no OAuth: no sign-in
	// is attempted; the advice is --header; a token it refuses is said to
	// be the one given, unechoed.
	t.Run("static token", func(t *testing.T) {
		f, server := protectedServer(t)
		f.NoPRM, f.NoMetadata = true, true
		t.Setenv("BROWSER", "/nonexistent/no-browser-for-a-static-token")
		code, out, errs := run(t, "", "check", "--url", server)
		if code != cli.ExitFailure || !strings.Contains(out, "offers no OAuth sign-in") || !strings.Contains(out, `--header "Authorization: Bearer TOKEN"`) ||
			strings.Contains(out, "needs a sign-in") || strings.Contains(out+errs, "login remote") {
			t.Fatalf("check --url without a token: %d\n%s\n%s", code, out, errs)
		}
		code, out, errs = run(t, "", "check", "--url", server, "--header", "Authorization: Bearer wrong-token-5678")
		if code != cli.ExitFailure || !strings.Contains(out, "refused the configured credentials") || !strings.Contains(out, "invalid_token") ||
			!strings.Contains(out, "--header") || strings.Contains(out+errs, "wrong-token-5678") {
			t.Fatalf("check --url with a refused token: %d\n%s\n%s", code, out, errs)
		}
	})
	// What the server sends (its result here) is shown as check shows a
	// configured connector's: hidden characters as \uXXXX escapes.
	t.Run("hidden characters", func(t *testing.T) {
		code, out, errs := run(t, "", "check", "--url", fixture.StartHTTP(t, false), "--call", "echo", "--args", `{"message":"pay\u202egpj.exe"}`)
		if code != cli.ExitOK || !strings.Contains(out, `pay\u202Egpj.exe`) || strings.ContainsRune(out, '\u202e') {
			t.Fatalf("check --url prints the server's hidden characters raw: %d\n%s\n%s", code, out, errs)
		}
	})
	t.Run("client credentials", func(t *testing.T) {
		f, server := protectedServer(t)
		f.ClientID, f.ClientSecret = "machine", "machine-secret-1234"
		secret := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(secret, []byte("machine-secret-1234\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("BROWSER", "/nonexistent/no-browser-for-machines")
		code, out, errs := run(t, "", "check", "--url", server, "--oauth-grant", "client_credentials",
			"--oauth-client-id", "machine", "--oauth-client-secret-file", secret)
		if code != cli.ExitOK || !strings.Contains(out, "✓ fixture-mcpserver") || strings.Contains(out+errs, "machine-secret-1234") {
			t.Fatalf("check --url with client credentials: %d\n%s\n%s", code, out, errs)
		}
	})
}

// A connector with credentials: per_user has no login at the command
// line (each person signs in from their own run), and logout forgets one
// named person's sign-in; --user applies to nothing else.
func TestPerUserLoginLogout(t *testing.T) {
	t.Setenv("CODEMODE_SECRET_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	cfg := filepath.Join(t.TempDir(), "codemode.yaml")
	body := "server:\n  auth:\n    issuer: https://auth.example.com/\n    resource: https://mcp.example.com/mcp\nstore:\n  path: ./c.db\nconnectors:\n" +
		"  gh:\n    url: https://gh.example.com/mcp\n    credentials: per_user\n  remote:\n    url: https://example.org/mcp\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "gh", "--config", cfg}, "connector gh has credentials: per_user: each person signs in for themselves"},
		{[]string{"logout", "gh", "--config", cfg}, "name whose sign-in to forget with --user SUBJECT"},
		{[]string{"logout", "remote", "--user", "alice", "--config", cfg}, "--user applies to a connector with credentials: per_user"},
	} {
		code, _, errs := run(t, "", tt.args...)
		if code != cli.ExitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
	code, out, errs := run(t, "", "logout", "gh", "--user", "alice", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "gh was not signed in") {
		t.Errorf("logout --user alice: %d\n%s\n%s", code, out, errs)
	}
}

// check does not fail a per-user connector nobody has signed in to yet:
// each person signs in from their own run, never with login.
func TestCheckPerUser(t *testing.T) {
	_, server := protectedServer(t)
	t.Setenv("CODEMODE_SECRET_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	cfg := filepath.Join(t.TempDir(), "codemode.yaml")
	body := "server:\n  auth:\n    issuer: https://auth.example.com/\n    resource: https://mcp.example.com/mcp\nstore:\n  path: ./c.db\nconnectors:\n" +
		"  gh:\n    url: " + server + "\n    credentials: per_user\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "- gh: credentials per user, and nobody has signed in yet") || strings.Contains(out, "login") {
		t.Errorf("check: %d\n%s\n%s", code, out, errs)
	}
}
