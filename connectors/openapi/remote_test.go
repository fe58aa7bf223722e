package openapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/backoff"
)

// flakyDocument serves testdata/notes-3.1.json once up is set, 503 before.
func flakyDocument(t *testing.T) (url string, up *atomic.Bool) {
	t.Helper()
	body := mustRead(t, "testdata/notes-3.1.json")
	up = new(atomic.Bool)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/notes.json", up
}

// A document unreachable at start: Open succeeds, Tools and calls say why,
// naming the connector; the document loads in the background once it can
// be read, and OnReady is called.
func TestRemoteStartsDownAndLoads(t *testing.T) {
	url, up := flakyDocument(t)
	ready := make(chan struct{})
	r, err := Open(context.Background(), Config{Name: "notes", Document: url, CacheDir: t.TempDir()},
		backoff.Policy{First: 10 * time.Millisecond, Max: 20 * time.Millisecond}, func() { close(ready) })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if tools, err := r.Tools(context.Background()); err == nil || len(tools) != 0 {
		t.Fatalf("Tools while down = %v, %v; want an error", tools, err)
	}
	if _, err := r.Call(context.Background(), "spec", nil); err == nil || !strings.Contains(err.Error(), "connector notes is unavailable") {
		t.Fatalf("Call while down: %v", err)
	}
	up.Store(true)
	<-ready
	tools, err := r.Tools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools after loading = %v, %v", tools, err)
	}
	if r.Capabilities().Description == "" {
		t.Errorf("no description after loading")
	}
}

// Close during the backoff ends the background reads and waits for them
// (goleak checks nothing is left).
func TestRemoteCloseDuringBackoff(t *testing.T) {
	url, _ := flakyDocument(t)
	r, err := Open(context.Background(), Config{Name: "notes", Document: url, CacheDir: t.TempDir()},
		backoff.Policy{First: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Tools(context.Background()); err == nil {
		t.Fatal("loaded a document that answers 503")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// A configuration error fails Open, whether or not the document can be
// read: reading it again would not fix it.
func TestRemoteConfigError(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"name", Config{Name: "no good"}, "no good"},
		{"document", Config{Name: "api"}, "connector api: no OpenAPI document"},
		{"pattern", Config{Name: "api", Exclude: []string{"["}}, `operations exclude pattern "["`},
		{"credentials", Config{Name: "api", Auth: &Auth{APIKey: &APIKey{In: "body", Name: "k", Value: "v"}}}, `connector api: auth.api_key.in: "body" is not one of header, query, cookie`},
		{"headers", Config{Name: "api", Headers: map[string]string{"Accept-Encoding": "gzip"}}, "connector api: headers: Accept-Encoding cannot be set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Name == "api" && tt.name != "document" {
				tt.cfg.Document = "http://127.0.0.1:1/x"
			}
			r, err := Open(context.Background(), tt.cfg, backoff.Policy{First: time.Hour}, nil)
			if err == nil {
				r.Close()
				t.Fatalf("Open succeeded, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
}
