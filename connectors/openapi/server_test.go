package openapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A received request, as a test server got it.
type received struct {
	Method string
	// URI is the request target exactly as sent (path and query encoded).
	URI    string
	Header http.Header
	Body   []byte
}

// A recorder is a test server on 127.0.0.1 that records every request and
// answers with its handler (200 and an empty JSON object when nil).
type recorder struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []received
}

func newRecorder(t testing.TB, handler http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, received{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body})
		rec.mu.Unlock()
		if handler == nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "{}")
			return
		}
		handler(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// requests returns what the server got so far.
func (rec *recorder) requests() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.reqs...)
}

// last returns the last request the server got; the test fails if it got
// none.
func (rec *recorder) last(t *testing.T) received {
	t.Helper()
	reqs := rec.requests()
	if len(reqs) == 0 {
		t.Fatal("the server got no request")
	}
	return reqs[len(reqs)-1]
}

// newTestCaller returns a caller whose base URL is base, closed when the
// test ends.
func newTestCaller(t testing.TB, base string, opts ...func(*Config)) *caller {
	t.Helper()
	cfg := Config{BaseURL: base}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := checkedCaller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// checkedCaller checks what cfg sends and makes its caller, as New does.
func checkedCaller(cfg Config) (*caller, error) {
	snd, err := checkSending(cfg)
	if err != nil {
		return nil, err
	}
	return newCaller(cfg, snd)
}
