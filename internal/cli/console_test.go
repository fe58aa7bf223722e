package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// lineWriter collects what a command writes and hands each line that
// matches re to found.
type lineWriter struct {
	re    *regexp.Regexp
	found chan []string // gets the first match

	mu   sync.Mutex
	buf  strings.Builder // guarded by mu
	sent bool            // guarded by mu
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.found <- m
		w.sent = true
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startConsole runs `codemode-mcp console` in process on a free port until
// the test ends and returns what its stderr's first match of re held.
func startConsole(t *testing.T, re string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &lineWriter{re: regexp.MustCompile(re), found: make(chan []string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, append([]string{"console", "--addr", "127.0.0.1:0"}, args...), cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != cli.ExitOK {
			t.Errorf("console exited %d:\n%s", code, stderr)
		}
	})
	select {
	case m := <-stderr.found:
		return m
	case code := <-done:
		done <- code
		t.Fatalf("console exited %d before serving:\n%s", code, stderr)
	}
	return nil
}

// The console command serves the runs of a store another process uses,
// behind a token it makes and prints, and approves through the runtime.
func TestConsoleCommandApprovesAnotherProcesssRun(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "await notes.createNote({ text: 'from the console' })")
	if code != cli.ExitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	var o struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &o); err != nil || o.Status != "paused" {
		t.Fatalf("run: %s", out)
	}

	m := startConsole(t, `open (http://127\.0\.0\.1:\d+/) and log in with the token ([0-9a-f]{32}) `, "--config", cfg)
	base, token := m[1], m[2]
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(base + strings.TrimPrefix(path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// post sends a form as the console's page does and follows the
	// redirect; it returns the final page.
	post := func(path string, form url.Values) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+strings.TrimPrefix(path, "/"), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if page := get("/"); !strings.Contains(page, `name="token"`) || strings.Contains(page, o.ExecutionID) {
		t.Fatalf("before login the console shows more than a login form:\n%s", page)
	}
	if resp, _ := post("/login", url.Values{"token": {token}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	page := get("/")
	if !strings.Contains(page, o.ExecutionID) || !strings.Contains(page, "from the console") {
		t.Fatalf("the paused run is not on the console:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)[1]
	digest := regexp.MustCompile(`name="digest" value="([0-9a-f]+)"`).FindStringSubmatch(page)[1]
	resp, page := post("/runs/"+o.ExecutionID+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}})
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/runs/"+o.ExecutionID || !strings.Contains(page, "Approved: the run completed.") {
		t.Fatalf("approve: %d at %s\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	if code, out, _ := run(t, "", "executions", "show", o.ExecutionID, "--config", cfg); code != 0 || !strings.Contains(out, `"status": "completed"`) {
		t.Fatalf("executions show after the console's approval: %d %s", code, out)
	}
	// The approval is the OS user's, as the command line's are, from the
	// console.
	me := "local"
	if u, err := user.Current(); err == nil && u.Username != "" {
		me = u.Username
	}
	code, out, errs = run(t, "", "audit", "--config", cfg, "--run", o.ExecutionID)
	if code != 0 {
		t.Fatalf("audit: %d %s", code, errs)
	}
	var approval codemode.AuditRecord
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r codemode.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err == nil && r.Action == codemode.AuditApprove {
			approval = r
		}
	}
	if want := (codemode.Person{Subject: codemode.LocalSubject, Name: me}); approval.Person != want || approval.Source != codemode.SourceConsole {
		t.Errorf("the console's approval is audited as %+v; want by %+v, source console\n%s", approval, want, out)
	}
}

// With server.auth_token set, that is the console's token and none is
// printed.
func TestConsoleCommandUsesTheConfiguredToken(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  auth_token: configured-token-1\nstore:\n  path: ./c.db\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := startConsole(t, `msg="approval console" url=(http://127\.0\.0\.1:\d+/)`, "--config", cfg)
	base := m[1]
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(base+"login", url.Values{"token": {"configured-token-1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Awaiting approval") {
		t.Fatalf("login with the configured token: %d\n%s", resp.StatusCode, b)
	}
}

func TestConsoleCommandUsage(t *testing.T) {
	if code, _, errs := run(t, "", "console", "extra"); code != cli.ExitUsage || !strings.Contains(errs, "console takes no arguments") {
		t.Errorf("console extra: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "console", "--config", notesConfig(t), "--addr", "nonsense"); code != cli.ExitFailure || !strings.Contains(errs, "listen on nonsense") {
		t.Errorf("bad addr: %d %q", code, errs)
	}
}
