package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	// The test binary serves as the sandbox worker too, as the real binary
	// does: the process pool starts it with the hidden sub-command, so the
	// CLI tests run programs with process isolation (the default).
	if len(os.Args) > 1 && os.Args[1] == "__sandbox-worker" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	// And as the browser $BROWSER names in the sign-in tests.
	if len(os.Args) > 2 && os.Args[1] == testBrowserArg {
		os.Exit(testBrowser(os.Args[2]))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		fixture.RemoveBinaries()
		if err := pgtest.Stop(); err != nil {
			println("stop the PostgreSQL test cluster:", err.Error())
		}
	}))
}

// check reports a downstream that fails at start-up with ✗ and its reason
// and exits 1, while a working one beside it is listed with its tools; run
// still works with the connector that started.
func TestCheckReportsAFailedDownstream(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "store:\n  path: ./c.db\nconnectors:\n" +
		"  fx:\n    command: " + fixture.MCPServer(t) + "\n" +
		"  broken:\n    command: /nonexistent/codemode-test-server\n    args: [\"--stdio\"]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure {
		t.Errorf("check exit code %d, want %d; stderr:\n%s", code, cli.ExitFailure, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var ok, bad string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "✓ fx: "):
			ok = l
		case strings.HasPrefix(l, "✗ broken: "):
			bad = l
		}
	}
	if ok == "" || !strings.Contains(ok, "get_sum") || !strings.Contains(ok, "echo") {
		t.Errorf("no ✓ line listing fx's tools in:\n%s", out)
	}
	if bad == "" || !strings.Contains(bad, "/nonexistent/codemode-test-server") || !strings.Contains(bad, "no such file or directory") {
		t.Errorf("no ✗ line with the reason broken failed in:\n%s", out)
	}
	// Where the connector is configured, as file:line.
	if !strings.HasPrefix(bad, "✗ broken: "+cfg+":6: ") {
		t.Errorf("the ✗ line does not say where broken is configured (%s:6): %s", cfg, bad)
	}
	if !strings.Contains(out, "1 connector(s) unavailable") || strings.Contains(out, "\nok\n") {
		t.Errorf("summary wrong in:\n%s", out)
	}

	code, out, errs = run(t, "", "run", "--config", cfg, "--code", `await fx.get_sum({a: 2, b: 3})`)
	if code != cli.ExitOK || !strings.Contains(out, `"result": 5`) {
		t.Errorf("run with the working connector: %d\n%s\n%s", code, out, errs)
	}
}

// A downstream that starts and never answers holds neither check nor run:
// check reports it as a failure with the reason (the phase its start timed
// out in) and exits 1, and run runs a program on the connectors that are
// ready, telling one that names the silent connector why it is missing.
func TestCheckAndRunDoNotWaitForASilentDownstream(t *testing.T) {
	dir := t.TempDir()
	silent := filepath.Join(dir, "silent.sh")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nwhile read -r line; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "server:\n  start_timeout: 300ms\nstore:\n  path: ./c.db\nconnectors:\n" +
		"  fx:\n    command: " + fixture.MCPServer(t) + "\n    start_timeout: 1m\n" +
		"  slow:\n    command: " + silent + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure {
		t.Errorf("check exit code %d, want %d; stderr:\n%s", code, cli.ExitFailure, errs)
	}
	if !strings.Contains(out, "\n✗ slow: "+cfg+":9: timed out after 300ms initialising\n") || !strings.Contains(out, "\n✓ fx: ") {
		t.Errorf("check output:\n%s", out)
	}
	if strings.Contains(errs, "slow") {
		t.Errorf("check's report names the slow connector; its log says it again:\n%s", errs)
	}

	code, out, errs = run(t, "", "run", "--config", cfg, "--code", `await fx.get_sum({a: 2, b: 3})`)
	if code != cli.ExitOK || !strings.Contains(out, `"result": 5`) {
		t.Errorf("run with the working connector: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, `connector=slow start_timeout=300ms during=initialising`) {
		t.Errorf("run's log does not name the slow connector and its deadline:\n%s", errs)
	}
	code, out, _ = run(t, "", "run", "--config", cfg, "--code", `await slow.anything({})`)
	if code != cli.ExitFailure || !strings.Contains(out, "connector slow is unavailable: timed out after 300ms initialising") {
		t.Errorf("run naming the silent connector: %d\n%s", code, out)
	}
}

// check and types start the connectors (the notes connector needs a
// database) but leave no database beside the config, with store.path set
// (relative to the config) or defaulted (relative to the working directory,
// here the config's directory too).
func TestCheckAndTypesCreateNoDatabase(t *testing.T) {
	for _, store := range []string{"store:\n  path: ./c.db\n", ""} {
		for _, cmd := range []string{"check", "types"} {
			dir, tmp := t.TempDir(), t.TempDir()
			t.Chdir(dir)
			t.Setenv("TMPDIR", tmp) // where the temporary store goes
			cfg := filepath.Join(dir, "codemode.yaml")
			if err := os.WriteFile(cfg, []byte(store+"connectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, "", cmd, "--config", cfg)
			if code != cli.ExitOK || !strings.Contains(out, "notes") {
				t.Errorf("%s (store %q): exit %d\n%s%s", cmd, store, code, out, errs)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if diff := cmp.Diff([]string{"codemode.yaml"}, names); diff != "" {
				t.Errorf("%s (store %q) left files beside the config (-want +got):\n%s", cmd, store, diff)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("%s (store %q) left its temporary store: %v", cmd, store, left)
			}
		}
	}
}

// check lists, under each connector, the places where its declarations are
// wider than its schemas (typegen's diagnostics).
func TestCheckListsTypeDiagnostics(t *testing.T) {
	dir := t.TempDir()
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:9"}],
"paths":{"/things":{"get":{"operationId":"listThings","parameters":[{"name":"q","in":"query","schema":{"type":"string","not":{"enum":["x"]}}}],
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}}}}}},
"components":{"schemas":{"Thing":{"type":"object","properties":{"id":{"type":"string"}},"propertyNames":{"pattern":"^[a-z]+$"}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "api.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "store:\n  path: ./c.db\n  cache_dir: ./cache\nconnectors:\n  api.v1:\n    openapi: ./api.json\n  notes:\n    builtin: notes\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitOK {
		t.Fatalf("check exit code %d; stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	want := "✓ api.v1: 3 tools: listThings, request, spec\n" +
		"  requires approval: request\n" +
		"  types: 2 schema place(s) typed wider than the schema says:\n" +
		"    api.v1.listThings (input #/properties/q): not cannot be expressed in TypeScript; the type is wider than the schema\n" +
		"    api.v1 (definitions #/components/schemas/Thing): propertyNames cannot be expressed in TypeScript; the type is wider than the schema\n" +
		"✓ notes: "
	if !strings.Contains(out, want) {
		t.Errorf("check output lacks\n%s\nin:\n%s", want, out)
	}
}

// check reports a connector that failed once, in its report: not again in
// its log ("retrying in the background", which check does not do), and
// without the words mcp-go's layers each repeat; a local OpenAPI document
// that is missing makes its connector unavailable, as an unreachable URL
// does, instead of stopping every command.
func TestCheckReportsAFailureOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "connectors:\n" +
		"  broken:\n    command: sh\n    args: [\"-c\", \"echo boom >&2; exit 3\"]\n" +
		"  api:\n    openapi: ./missing.yaml\n" +
		"  notes:\n    builtin: notes\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEMODE_LOG_LEVEL", "")
	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitFailure {
		t.Errorf("check exit code %d, want %d", code, cli.ExitFailure)
	}
	// (The server may be gone before or after the handshake was written:
	// a closed transport, or a broken pipe.)
	for _, want := range []string{"\n✗ broken: " + cfg + ":2: initialize: transport error: ", "(the server exited with status 3); server stderr:\n  boom\n", "\n✗ api: " + cfg + ":5: read the OpenAPI document: open " + filepath.Join(dir, "missing.yaml"), "\n✓ notes: "} {
		if !strings.Contains(out, want) {
			t.Errorf("check's report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "transport error: transport error") {
		t.Errorf("a repeated prefix:\n%s", out)
	}
	if errs != "" {
		t.Errorf("check's log repeats its report:\n%s", errs)
	}
	code, out, errs = run(t, "", "run", "--config", cfg, "--db", filepath.Join(dir, "c.db"), "--code", "await notes.listNotes({})")
	if code != cli.ExitOK || !strings.Contains(out, `"completed"`) {
		t.Errorf("run beside a missing document: %d\n%s\n%s", code, out, errs)
	}
}

// run waits for a call its server runs as a task, and executions show
// gives the call's task id.
func TestExecutionsShowADownstreamTask(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	body := "store:\n  path: ./c.db\nsandbox:\n  isolation: inprocess\nconnectors:\n" +
		"  fx:\n    command: " + fixture.MCPServer(t) + "\n    args: [\"-tasks\"]\n" +
		"    env:\n      FIXTURE_SIDE_EFFECTS: " + filepath.Join(dir, "effects") + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", `return await fx.task_counter({ name: "cli", ms: 1 })`)
	var o struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &o); err != nil || code != cli.ExitOK || o.Status != "completed" {
		t.Fatalf("run: %d %v\n%s%s", code, err, out, errs)
	}
	var shown struct {
		Calls []struct{ State, Task string }
	}
	code, out, errs = run(t, "", "executions", "show", o.ExecutionID, "--config", cfg)
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != cli.ExitOK || len(shown.Calls) != 1 {
		t.Fatalf("show: %d %v\n%s%s", code, err, out, errs)
	}
	if c := shown.Calls[0]; c.State != "applied" || c.Task == "" {
		t.Errorf("the call = %+v, want applied with its task id", c)
	}
}

// check opens the configured store as serve would, but as it is: one that
// cannot be opened stops it with the reason at the line of store.path (a
// file that is not a database, a schema newer than the binary's, a
// PostgreSQL server that refuses the connection), as it would stop serve;
// one that is not there yet is said to be created by serve, and is not.
func TestCheckOpensTheConfiguredStore(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "codemode.yaml")
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database, but long enough to have a header's worth of bytes in it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good, newer := filepath.Join(dir, "good.db"), filepath.Join(dir, "newer.db")
	for _, p := range []string{good, newer} {
		newStore(t, p)
	}
	sqlExec(t, newer, "PRAGMA user_version = 99")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "postgres://u@" + l.Addr().String() + "/db?connect_timeout=5"
	l.Close()
	for _, tc := range []struct {
		path string
		code int
		want string // in stdout when the code is 0, else in stderr
	}{
		{"./absent.db", cli.ExitOK, "\nstore: " + filepath.Join(dir, "absent.db") + " (would be created)\n"},
		{good, cli.ExitOK, "\nstore: " + good + "\n"},
		{notDB, cli.ExitFailure, "codemode-mcp: " + cfg + ":2: store.path: open store " + notDB + ": file is not a database (26)\n"},
		{newer, cli.ExitFailure, "codemode-mcp: " + cfg + ":2: store.path: open store " + newer + ": schema version 99 is newer than this binary's "},
		{refused, cli.ExitFailure, "codemode-mcp: " + cfg + ":2: store.path: open store: store " + refused + ": "},
	} {
		if err := os.WriteFile(cfg, []byte("store:\n  path: "+strconv.Quote(tc.path)+"\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, "", "check", "--config", cfg)
		if got := map[bool]string{true: out, false: errs}[tc.code == cli.ExitOK]; code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("check with store.path %s: exit %d, want %d with %q in\n%s%s", tc.path, code, tc.code, tc.want, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("check created the store it said would be created: %v", err)
	}
}

// check, with a url connector whose sign-ins it reads from the configured
// store, writes nothing to that store: an older SQLite file is not
// migrated (its bytes are the same, nothing is left beside it), an older
// PostgreSQL schema keeps its version, and an empty PostgreSQL database
// gets no tables; check says what serve would do.
func TestCheckLeavesTheStoreAsItIs(t *testing.T) {
	remote := fixture.StartHTTP(t, false)
	check := func(t *testing.T, dir, store string) string {
		t.Helper()
		cfg := filepath.Join(dir, "codemode.yaml")
		if err := os.WriteFile(cfg, []byte("store:\n  path: "+strconv.Quote(store)+"\nconnectors:\n  remote:\n    url: "+remote+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, "", "check", "--config", cfg)
		if code != cli.ExitOK || !strings.Contains(out, "✓ remote: ") {
			t.Fatalf("check: exit %d\n%s%s", code, out, errs)
		}
		return out
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "c.db")
		newStore(t, db)
		// Schema version 7: as it was before audit records had a source.
		sqlExec(t, db, "ALTER TABLE audit DROP COLUMN source", "PRAGMA user_version = 7")
		before, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		out := check(t, dir, db)
		if !strings.Contains(out, "\nstore: "+db+" (schema version 7: serve and run migrate it to ") {
			t.Errorf("check does not say the store would be migrated:\n%s", out)
		}
		after, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("check changed the store: %d bytes, then %d; schema version 7, then %d", len(before), len(after), binary.BigEndian.Uint32(after[60:64]))
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if diff := cmp.Diff([]string{"c.db", "codemode.yaml"}, names); diff != "" {
			t.Errorf("check left files beside the store (-want +got):\n%s", diff)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		out := check(t, t.TempDir(), url)
		var tables int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil || tables != 0 {
			t.Errorf("check set an empty database up: %d tables (%v)", tables, err)
		}
		if !strings.Contains(out, " (its tables would be created)\n") {
			t.Errorf("check does not say the store would be set up:\n%s", out)
		}

		newStore(t, url)
		var latest int
		if _, err := conn.Exec(ctx, "ALTER TABLE audit DROP COLUMN source; UPDATE codemode_schema SET version = version - 1"); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, "SELECT version + 1 FROM codemode_schema").Scan(&latest); err != nil {
			t.Fatal(err)
		}
		out = check(t, t.TempDir(), url)
		if want := fmt.Sprintf(" (schema version %d: serve and run migrate it to %d)\n", latest-1, latest); !strings.Contains(out, want) {
			t.Errorf("check does not say%s in:\n%s", want, out)
		}
		var version int
		if err := conn.QueryRow(ctx, "SELECT version FROM codemode_schema").Scan(&version); err != nil || version != latest-1 {
			t.Errorf("check migrated the store: version %d, was %d (%v)", version, latest-1, err)
		}
	})
}

// newStore makes a store, of this binary's schema, at location.
func newStore(t *testing.T, location string) {
	t.Helper()
	st, err := app.OpenStore(context.Background(), config.Default(), location, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// sqlExec runs statements on the SQLite file db.
func sqlExec(t *testing.T, db string, stmts ...string) {
	t.Helper()
	h, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, s := range stmts {
		if _, err := h.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
