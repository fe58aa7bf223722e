package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// transports configures the fixture server over each transport.
var transports = []struct {
	name   string
	config func(t *testing.T) Config
}{
	{"stdio", func(t *testing.T) Config {
		return Config{Name: "fx", Command: fixture.MCPServer(t)}
	}},
	{"http", func(t *testing.T) Config {
		return Config{Name: "fx", URL: fixture.StartHTTP(t, false)}
	}},
	{"sse", func(t *testing.T) Config {
		return Config{Name: "fx", URL: fixture.StartHTTP(t, true), SSE: true}
	}},
}

// dial connects with cfg and closes the connector when the test ends.
func dial(t *testing.T, cfg Config) *Connector {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	ctx, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// testLogger logs to the test's log, at debug level, until the test's
// cleanups have run (goroutines may still log after that).
func testLogger(t *testing.T) *slog.Logger {
	w := &tWriter{t: t}
	t.Cleanup(w.stop) // registered first, so it runs after the connector's Close
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct {
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

func (w *tWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *tWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

// recorder is a slog handler keeping every record's message and attributes.
type recorder struct {
	mu      sync.Mutex
	records []map[string]string
	more    chan struct{} // closed by the next record (see await)
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, m)
	if r.more != nil {
		close(r.more)
		r.more = nil
	}
	r.mu.Unlock()
	return nil
}

// count is the number of records so far.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}

// await waits for a record after the first from that match accepts, and
// returns it.
func (r *recorder) await(t *testing.T, from int, match func(map[string]string) bool) map[string]string {
	t.Helper()
	for {
		r.mu.Lock()
		for _, rec := range r.records[from:] {
			if match(rec) {
				r.mu.Unlock()
				return rec
			}
		}
		if r.more == nil {
			r.more = make(chan struct{})
		}
		more := r.more
		r.mu.Unlock()
		fixture.Wait(t, "the log record", more)
	}
}

func (r *recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recorderView{r: r, attrs: attrs}
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

func (r *recorder) find(match func(map[string]string) bool) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, rec := range r.records {
		if match(rec) {
			out = append(out, rec)
		}
	}
	return out
}

// recorderView is a recorder with attributes added by With.
type recorderView struct {
	r     *recorder
	attrs []slog.Attr
}

func (v *recorderView) Enabled(context.Context, slog.Level) bool { return true }

func (v *recorderView) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(v.attrs...)
	return v.r.Handle(ctx, rec)
}

func (v *recorderView) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recorderView{r: v.r, attrs: append(append([]slog.Attr(nil), v.attrs...), attrs...)}
}

func (v *recorderView) WithGroup(string) slog.Handler { return v }

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s\ngot: %s", diff, got)
	}
}
