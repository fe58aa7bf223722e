package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

const secret = "sk-test-0123456789"

// leaky is a connector that tells its secret everywhere it can.
type leaky struct{}

func (leaky) Name() string { return "leaky" }
func (leaky) Close() error { return nil }
func (leaky) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Description: "uses key " + secret}
}
func (leaky) Tools(context.Context) ([]connectors.Tool, error) {
	return []connectors.Tool{
		{Name: "fail", SourceName: "fail", Description: "fails with " + secret,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string","default":"` + secret + `"}}}`)},
		{Name: "broken", SourceName: "broken", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, nil
}
func (leaky) Call(_ context.Context, tool string, _ json.RawMessage) (connectors.Result, error) {
	if tool == "broken" {
		return connectors.Result{}, errors.New("GET https://api.example.com/x?key=" + secret + ": connection refused")
	}
	return connectors.Result{IsError: true, Message: "bad key " + secret, Value: json.RawMessage(`{"key":"` + secret + `"}`)}, nil
}

// TestSecretsNeverReachTheProgramTheModelOrTheLog: a downstream that
// echoes a configured secret (the fixture's environment here) gives the
// program the redacted value; tool descriptions, errors, outcomes and the
// SQLite file hold no trace of it.
func TestSecretsNeverReachTheProgramTheModelOrTheLog(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxEnv: map[string]string{"FX_API_KEY": secret}, scrubber: scrub.New(secret),
		extra: []catalog.Source{{Connector: leaky{}}}})
	o := e.run(`async () => {
		const env = await fx.environ({});
		console.log("key is", env.FX_API_KEY);
		let caught = [];
		for (const m of ["fail", "broken"]) {
			try { await leaky[m]({}) } catch (err) { caught.push(err.message) }
		}
		const found = await codemode.search("fails");
		const types = await codemode.describe("leaky");
		return { seen: env.FX_API_KEY, caught, found, types };
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	var got struct {
		Seen   string
		Caught []string
	}
	if err := json.Unmarshal(o.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Seen != scrub.Placeholder || len(got.Caught) != 2 || !strings.Contains(got.Caught[0], "bad key [redacted]") || !strings.Contains(got.Caught[1], "key=[redacted]") {
		t.Errorf("the program saw %q and caught %q", got.Seen, got.Caught)
	}
	out, _ := json.Marshal(o)
	infos, _ := json.Marshal(e.rt.Connectors())
	decls, err := e.rt.Declarations("")
	if err != nil {
		t.Fatal(err)
	}
	_, entries, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(entries)
	for what, text := range map[string]string{"outcome": string(out), "connectors": string(infos), "declarations": decls, "log entries": string(stored)} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s hold the secret: %s", what, text)
		}
	}
	if !strings.Contains(string(infos), "uses key [redacted]") {
		t.Errorf("connector description not scrubbed: %s", infos)
	}
	e.shutdown()
	// The database, its WAL if one is left, and the write-ahead journal
	// directory with any journal in it.
	matches, _ := filepath.Glob(e.dbPath + "*")
	files := 0
	for _, m := range matches {
		err := filepath.WalkDir(m, func(f string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret", f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Fatal("no database file")
	}
}

// TestTooLargeCodeStoresNothing: a program over the code limit is refused
// before an execution exists.
func TestTooLargeCodeStoresNothing(t *testing.T) {
	e := newEnv(t, setup{limits: sandbox.Limits{MaxCodeBytes: 100}})
	o := e.run("async () => "+strings.Repeat(" ", 200)+"1", nil)
	if o.Status != codemode.StatusError || o.ExecutionID != "" || !strings.Contains(o.Error, "code is too large: 213 bytes, limit 100 bytes") {
		t.Errorf("outcome %+v", o)
	}
	execs, err := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(execs) != 0 {
		t.Errorf("%d executions stored for a refused program", len(execs))
	}
}

// TestClockReadingsCountAgainstTheValueCap: readings whose compact record
// would pass the per-value cap end the run with an error saying what to do,
// and are not stored.
func TestClockReadingsCountAgainstTheValueCap(t *testing.T) {
	e := newEnv(t, setup{maxValue: 300, limits: sandbox.Limits{MaxClockReads: 1 << 30}})
	// 200 distinct milliseconds take at least 200 runs in the compact form.
	o := e.run(`async () => { const seen = new Set(); while (seen.size < 200) seen.add(Date.now()); return seen.size }`, nil)
	if o.Status != codemode.StatusError || !strings.Contains(o.Error, "too many clock readings: the ") || !strings.Contains(o.Error, "per value") || !strings.Contains(o.Error, "codemode.step") {
		t.Fatalf("outcome %v %q", o.Status, o.Error)
	}
	ex, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Clock.Times) != 0 {
		t.Errorf("the execution keeps %d clock readings", len(ex.Clock.Times))
	}
}
