package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.Cleanup(func(int) {
			fixture.RemoveBinaries()
			if err := pgtest.Stop(); err != nil {
				println("stop the PostgreSQL test cluster:", err.Error())
			}
		}),
		// regexp2 (JSON Schema patterns with a match timeout) keeps one
		// clock goroutine of its own for a while after a match.
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// retryEnv is an App whose connector fx is a stdio MCP server started by a
// shell script that fails (counting its attempts) until the file mark
// exists, then runs the fixture server.
type retryEnv struct {
	t       *testing.T
	a       *App
	mark    string
	count   string
	changed chan struct{} // receives when OnConnectorsChanged's function ran
	closed  bool
}

// openRetryEnv opens the App. server is the script's last
// line, run once the mark exists ("" runs the fixture server).
func openRetryEnv(t *testing.T, server string) *retryEnv {
	t.Helper()
	dir := t.TempDir()
	e := &retryEnv{t: t, mark: filepath.Join(dir, "up"), count: filepath.Join(dir, "attempts"), changed: make(chan struct{}, 1)}
	if server == "" {
		server = "exec '" + fixture.MCPServer(t) + "'"
	}
	script := filepath.Join(dir, "server.sh")
	body := "#!/bin/sh\necho attempt >> \"$COUNT\"\n[ -f \"$MARK\" ] || { echo 'not up yet' >&2; exit 1; }\n" + server + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "codemode.yaml")
	// An attempt ends when its server answers or exits, or is cancelled:
	// never by its start timeout within a test.
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  fx:\n    command: " + strconv.Quote(script) + "\n    start_timeout: 1h\n" +
		"    env:\n      MARK: " + strconv.Quote(e.mark) + "\n      COUNT: " + strconv.Quote(e.count) + "\n"
	cfg, err := config.Parse([]byte(yaml), file)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := Open(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	e.a = a
	a.OnConnectorsChanged(func() {
		select {
		case e.changed <- struct{}{}:
		default:
		}
	})
	t.Cleanup(e.close)
	return e
}

func (e *retryEnv) close() {
	if e.closed {
		return
	}
	e.closed = true
	if err := e.a.Close(); err != nil {
		e.t.Errorf("Close: %v", err)
	}
}

// run executes code and returns its outcome.
func (e *retryEnv) run(code string) codemode.Outcome {
	e.t.Helper()
	o, err := e.a.Runtime.Execute(context.Background(), code, nil)
	if err != nil {
		e.t.Fatalf("Execute: %v", err)
	}
	return o
}

// mustFailUnavailable runs a program calling fx and checks that it fails
// saying fx is unavailable.
func (e *retryEnv) mustFailUnavailable() {
	e.t.Helper()
	o := e.run(`async () => await fx.get_sum({ a: 2, b: 3 })`)
	if o.Status != codemode.StatusError || !strings.HasPrefix(o.Error, "ReferenceError: fx is not defined (line 1:") || !strings.Contains(o.Error, "); connector fx is unavailable: ") {
		e.t.Fatalf("outcome %s %q; want an error saying fx is unavailable", o.Status, o.Error)
	}
}

// mustSum runs a program calling fx and checks its result.
func (e *retryEnv) mustSum() {
	e.t.Helper()
	o := e.run(`async () => await fx.get_sum({ a: 2, b: 3 })`)
	if o.Status != codemode.StatusCompleted || string(o.Result) != "5" {
		b, _ := json.Marshal(o)
		e.t.Fatalf("outcome %s; want completed with 5", b)
	}
}

// attempts counts the script's starts (start-up included).
func (e *retryEnv) attempts() int {
	e.t.Helper()
	b, err := os.ReadFile(e.count)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// waitChanged waits for OnConnectorsChanged's function.
func (e *retryEnv) waitChanged() {
	e.t.Helper()
	end, cancel := fixture.WithDeadline(e.t, context.Background())
	defer cancel()
	select {
	case <-e.changed:
	case <-end.Done():
		e.t.Fatalf("OnConnectorsChanged's function was not called by the test's deadline; fx: %+v (%d attempts)", e.info(), e.attempts())
	}
}

func (e *retryEnv) bringUp() {
	e.t.Helper()
	if err := os.WriteFile(e.mark, nil, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// info is what the runtime says of fx.
func (e *retryEnv) info() codemode.ConnectorInfo {
	for _, c := range e.a.Runtime.Connectors() {
		if c.Name == "fx" {
			return c
		}
	}
	e.t.Fatal("the runtime has no connector fx")
	return codemode.ConnectorInfo{}
}

func toolNamesOf(ci codemode.ConnectorInfo) []string {
	var out []string
	for _, tl := range ci.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// A downstream that fails at start-up is unavailable, is started again by
// its connector on the backoff's schedule, and joins: its tools appear,
// programs call it, the change is announced, and Close closes it.
func TestUnavailableConnectorJoinsLater(t *testing.T) {
	e := openRetryEnv(t, "")
	if !slices.ContainsFunc(e.a.Warnings, func(w string) bool { return strings.Contains(w, ": connector fx is unavailable: ") }) {
		t.Fatalf("warnings %q do not report fx unavailable", e.a.Warnings)
	}
	if ci := e.info(); ci.Error == "" || len(ci.Tools) != 0 {
		t.Fatalf("fx at start: %+v; want an error and no tools", ci)
	}
	e.mustFailUnavailable()
	fixture.Until(t, "a retry failed", func() bool { return e.attempts() >= 3 })
	select {
	case <-e.changed:
		t.Fatal("a change was announced while fx was still down")
	default:
	}

	e.bringUp()
	e.waitChanged()
	if ci := e.info(); ci.Error != "" || !slices.Contains(toolNamesOf(ci), "get_sum") {
		t.Fatalf("fx after it came up: error %q, tools %v", ci.Error, toolNamesOf(ci))
	}
	e.mustSum()
	warnings := slices.Clone(e.a.Warnings)

	if len(e.a.Connectors) != 1 || e.a.Connectors[0].Name() != "fx" {
		t.Fatalf("connectors: %v; want fx", e.a.Connectors)
	}
	e.close()
	if _, err := e.a.Connectors[0].Tools(context.Background()); err == nil {
		t.Fatal("fx still lists its tools after Close; want it closed")
	}
	if diff := cmp.Diff(warnings, e.a.Warnings); diff != "" {
		t.Fatalf("warnings changed (-before +after):\n%s", diff)
	}
}

// Close cancels an attempt under way (a server that never answers the
// handshake) and waits for it; goleak (TestMain) checks nothing is left.
func TestCloseCancelsAnAttempt(t *testing.T) {
	e := openRetryEnv(t, "exec sleep 600")
	e.bringUp()
	fixture.Until(t, "a retry began", func() bool { return e.attempts() >= 2 })
	before := e.attempts()
	// The cancelled attempt stops its server: 2 s of grace after its stdin
	// closes, then SIGTERM. (Not cancelled, it would wait for its server,
	// which never answers, for its hour of start timeout.) No attempt may
	// begin once Close did.
	e.close()
	if n := e.attempts(); n != before {
		t.Errorf("%d attempts began during Close", n-before)
	}
}

// An OpenAPI document at a URL that cannot be read at start-up (no cached
// copy) leaves its connector unavailable; its connector reads it again on
// the same backoff, and once it loads the runtime lists its methods, a
// later program sees them, and the change is announced.
func TestUnreachableDocumentJoinsLater(t *testing.T) {
	body, err := os.ReadFile("../../connectors/openapi/testdata/notes-3.1.json")
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n  cache_dir: " + strconv.Quote(filepath.Join(dir, "cache")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  notes:\n    openapi: " + strconv.Quote(srv.URL+"/notes.json") + "\n"
	a, changed := openWatched(t, dir, yaml)
	// The warning says where the file has the connector, as start-up
	// errors do.
	if where := filepath.Join(dir, "codemode.yaml") + ":7: connector notes is unavailable: "; !slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.HasPrefix(w, where) }) {
		t.Fatalf("warnings %q do not report notes unavailable at %q", a.Warnings, where)
	}
	o, err := a.Runtime.Execute(context.Background(), `async () => typeof notes.spec`, nil)
	if err != nil || o.Status != codemode.StatusError || !strings.Contains(o.Error, "connector notes is unavailable: ") {
		t.Fatalf("program naming notes while down: %+v, %v", o, err)
	}
	up.Store(true)
	fixture.Wait(t, "the call of OnConnectorsChanged's function", changed)
	o, err = a.Runtime.Execute(context.Background(), `async () => typeof notes.spec`, nil)
	if err != nil || o.Status != codemode.StatusCompleted || string(o.Result) != `"function"` {
		t.Fatalf("program naming notes once loaded: %+v, %v", o, err)
	}
}

// openWatched opens an App on yaml, as the file codemode.yaml in dir, with
// the retry schedule b, and closes it when the test ends. The channel
// receives when OnConnectorsChanged's function ran.
func openWatched(t *testing.T, dir, yaml string) (*App, <-chan struct{}) {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), filepath.Join(dir, "codemode.yaml"))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := Open(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	changed := make(chan struct{}, 1)
	a.OnConnectorsChanged(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	return a, changed
}
