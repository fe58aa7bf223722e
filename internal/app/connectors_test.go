package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
)

// A builtin configured under another name is that name in programs and
// keeps what it can do: a note its run created is deleted by a rollback.
func TestABuiltinTakesItsConfiguredName(t *testing.T) {
	dir := t.TempDir()
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  memo:\n    builtin: notes\n"
	a, _ := openWatched(t, dir, yaml)
	if len(a.Connectors) != 1 || a.Connectors[0].Name() != "memo" {
		t.Fatalf("connectors %v, want one named memo", a.Connectors)
	}
	ctx := context.Background()
	o, err := a.Runtime.Execute(ctx, `async () => (await memo.createNote({ text: "remember" })).id`, nil)
	if err != nil || o.Status != codemode.StatusPaused {
		t.Fatalf("createNote: %+v, %v; want paused for approval", o, err)
	}
	if o, err = a.Runtime.Approve(ctx, o.ExecutionID, nil); err != nil || o.Status != codemode.StatusCompleted {
		t.Fatalf("Approve: %+v, %v", o, err)
	}
	r, err := a.Runtime.Rollback(ctx, o.ExecutionID)
	if err != nil || r.Status != codemode.StatusRolledBack {
		t.Fatalf("Rollback: %+v, %v", r, err)
	}
	if diff := cmp.Diff([]int{1}, r.Reverted); diff != "" {
		t.Errorf("reverted (-want +got):\n%s", diff)
	}
	o, err = a.Runtime.Execute(ctx, `async () => (await memo.listNotes({})).notes.length`, nil)
	if err != nil || o.Status != codemode.StatusCompleted || string(o.Result) != "0" {
		t.Errorf("notes after the rollback: %+v, %v; want none", o, err)
	}
}

// What a connector reports of its source without stopping (its
// Diagnostics) is a start-up warning naming the connector.
func TestConnectorDiagnosticsAreWarnings(t *testing.T) {
	dir := t.TempDir()
	doc := `{"openapi":"3.1.0","info":{"title":"Pets","version":"1"},"servers":[{"url":"http://127.0.0.1:9/"}],"paths":{
		"/pets":{"get":{"operationId":"getPet","responses":{"200":{"description":"ok"}}}},
		"/pets/{id}":{"get":{"operationId":"getPet","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}}}}`
	file := filepath.Join(dir, "pets.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n  cache_dir: " + strconv.Quote(filepath.Join(dir, "cache")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  pets:\n    openapi: " + strconv.Quote(file) + "\n"
	a, _ := openWatched(t, dir, yaml)
	want := `connector pets: getPet: method name "getPet" is already taken by getPet; operation skipped`
	if !slices.Contains(a.Warnings, want) {
		t.Errorf("warnings %q do not hold %q", a.Warnings, want)
	}
}

// A connector that cannot start stops start-up with an error that names
// the connector and where the configuration file has it, as a mistake
// found when the file is read does, and the connectors that did start
// are closed (goleak).
func TestAConnectorThatCannotStartNamesItsLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codemode.yaml")
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  memo:\n    builtin: notes\n" +
		"  remote:\n    url: http://example.com/mcp\n    oauth:\n      client_id: abc\n" // line 8
	cfg, err := config.Parse([]byte(yaml), file)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := Open(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		a.Close()
		t.Fatal("Open started a connector whose OAuth cannot work")
	}
	if want := "fatal: " + file + ":8: connector remote: oauth: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Open: %v\nwant it to begin %q", err, want)
	}
}
