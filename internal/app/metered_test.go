package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
)

// The metered store times the writes of either store and keeps what the
// store can do: SQLite's journal stays a codemode.Journaler (the runtime
// writes ahead to it rather than committing each call), PostgreSQL, which
// has none, does not become one. Off, the store is not wrapped.
func TestMeteredStoreKeepsTheJournal(t *testing.T) {
	ctx := context.Background()
	m, err := telemetry.NewMetrics(ctx, telemetry.MetricsOptions{Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	for _, tc := range []struct {
		name    string
		loc     func(t *testing.T) string
		journal bool
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "c.db") }, true},
		{"postgres", func(t *testing.T) string { return pgtest.NewDatabase(t) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := OpenStore(ctx, config.Default(), tc.loc(t), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if meterStore(st, nil) != st {
				t.Error("the store is wrapped with metrics off")
			}
			ms := meterStore(st, m)
			j, ok := ms.(codemode.Journaler)
			if ok != tc.journal {
				t.Fatalf("the metered store is a Journaler: %v, want %v", ok, tc.journal)
			}
			now := time.Now().UTC()
			e := &codemode.Execution{ID: "exec_" + tc.name, Code: "1", Status: codemode.StatusRunning, CreatedAt: now, UpdatedAt: now}
			if err := ms.CreateExecution(ctx, e); err != nil {
				t.Fatal(err)
			}
			if ok {
				entry := codemode.Entry{ExecutionID: e.ID, Seq: 1, Kind: codemode.KindCall, Connector: "fx", Method: "echo", State: codemode.EntryExecuting, CreatedAt: now, UpdatedAt: now}
				if err := j.Journal(ctx, e.ID, []codemode.Entry{entry}); err != nil {
					t.Fatal(err)
				}
				if err := j.DropJournal(ctx, e.ID); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`codemode_store_write_duration_seconds_count{op="create_execution",outcome="ok"} 2`,
		`codemode_store_write_duration_seconds_count{op="journal",outcome="ok"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("no %s in\n%s", want, rec.Body)
		}
	}
}

// With metrics on, the app counts a downstream server started again after
// it crashed, under its connector's name, and observes the paused runs.
func TestMetricsCountDownstreamRestarts(t *testing.T) {
	ctx := context.Background()
	m, err := telemetry.NewMetrics(ctx, telemetry.MetricsOptions{Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	dir := t.TempDir()
	yaml := "store:\n  path: ./c.db\nsandbox:\n  isolation: inprocess\nconnectors:\n  fx:\n    command: " + fixture.MCPServer(t) + "\n"
	cfg, err := config.Parse([]byte(yaml), filepath.Join(dir, "codemode.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(ctx, cfg, Options{Logger: slog.New(slog.DiscardHandler), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	fx := a.Connectors[0]
	if _, err := fx.Call(ctx, "crash", nil); err == nil {
		t.Fatal("crash did not fail")
	}
	if _, err := fx.Call(ctx, "echo", []byte(`{"message":"back"}`)); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`codemode_downstream_restarts_total{connector="fx"} 1`, "codemode_approvals_pending 0"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("no %s in\n%s", want, rec.Body)
		}
	}
}

// A scrape counts the paused runs without reading them whole: 10 paused
// runs, each with 512 kB of code and 512 kB of console output (10 MB),
// make a scrape of the metrics allocate far less than that.
func TestMetricsCountPausedRunsBrief(t *testing.T) {
	ctx := context.Background()
	m, err := telemetry.NewMetrics(ctx, telemetry.MetricsOptions{Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	dir := t.TempDir()
	cfg, err := config.Parse([]byte("store:\n  path: ./c.db\nsandbox:\n  isolation: inprocess\n"), filepath.Join(dir, "codemode.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(ctx, cfg, Options{Logger: slog.New(slog.DiscardHandler), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const runs, size = 10, 512 << 10
	now := time.Now().UTC()
	for i := range runs {
		e := &codemode.Execution{ID: fmt.Sprintf("exec_%d", i), Code: strings.Repeat("1", size), Logs: []string{strings.Repeat("l", size)},
			Status: codemode.StatusPaused, CreatedAt: now, UpdatedAt: now}
		if err := a.Store.CreateExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	scrape() // (what a first scrape sets up)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	body := scrape()
	goruntime.ReadMemStats(&m1)
	if want := fmt.Sprintf("codemode_approvals_pending %d", runs); !strings.Contains(body, want) {
		t.Fatalf("no %s in\n%s", want, body)
	}
	if n, bound := m1.TotalAlloc-m0.TotalAlloc, uint64(runs*2*size/10); n > bound {
		t.Errorf("a scrape with %d paused runs of %d bytes of code and output allocated %d bytes, want at most %d", runs, 2*size, n, bound)
	}
}
