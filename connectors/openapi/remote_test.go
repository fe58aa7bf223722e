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

// A configuration error fails Open.
func TestRemoteConfigError(t *testing.T) {
	if _, err := Open(context.Background(), Config{Name: "no good", Document: "http://127.0.0.1:1/x"}, backoff.Policy{}, nil); err == nil {
		t.Fatal("Open with a bad name succeeded")
	}
}
