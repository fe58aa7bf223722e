package openapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// connCounter counts the connections a test server accepted and closed.
type connCounter struct{ n, closed atomic.Int64 }

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		c.n.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.closed.Add(1)
	}
}

// countingTransport counts the requests it carries for fallback.
type countingTransport struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// echoServer answers with the request's method, path and X-Id header, as
// JSON or chunked text (?chunked), after ?sleep.
func echoServer(t *testing.T, tlsServer bool) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
			time.Sleep(d)
		}
		if r.URL.Query().Has("close") {
			w.Header().Set("Connection", "close")
		}
		body := fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, r.Header.Get("X-Id"))
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush() // no Content-Length: chunked
			for _, part := range strings.SplitAfter(body, " ") {
				io.WriteString(w, part)
				w.(http.Flusher).Flush()
			}
			return
		}
		if r.URL.Query().Has("big") {
			body = strings.Repeat("x", 1<<20)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	if tlsServer {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, cc
}

func newDirectTest(t *testing.T, srv *httptest.Server) (*directTransport, *countingTransport, *http.Client) {
	fb := &countingTransport{rt: srv.Client().Transport}
	dt := newDirectTransport(fb)
	if srv.TLS != nil {
		dt.tls = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	}
	t.Cleanup(dt.CloseIdleConnections)
	return dt, fb, &http.Client{Transport: dt}
}

func get(t *testing.T, client *http.Client, method, url, id string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Id", id)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestDirectTransportReuse: sequential requests share one connection,
// whatever the body's framing; a request or answer asking to close, or a
// body closed before its end, is not reused; POST and PATCH go to the
// fallback; TLS works.
func TestDirectTransportReuse(t *testing.T) {
	for _, tlsServer := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsServer), func(t *testing.T) {
			srv, cc := echoServer(t, tlsServer)
			_, fb, client := newDirectTest(t, srv)
			for i, q := range []string{"", "?chunked", "", "?chunked", ""} {
				got, err := get(t, client, "GET", srv.URL+"/a"+q, strconv.Itoa(i))
				if err != nil || got != "GET /a "+strconv.Itoa(i) {
					t.Fatalf("request %d: %q %v", i, got, err)
				}
			}
			if got, err := get(t, client, "HEAD", srv.URL+"/h", "x"); err != nil || got != "" {
				t.Fatalf("HEAD: %q %v", got, err)
			}
			if n := cc.n.Load(); n != 1 {
				t.Errorf("%d connections for 6 sequential requests; want 1", n)
			}
			if got, err := get(t, client, "GET", srv.URL+"/c?close", "c"); err != nil || got != "GET /c c" {
				t.Fatalf("close: %q %v", got, err)
			}
			if got, err := get(t, client, "GET", srv.URL+"/d", "d"); err != nil || got != "GET /d d" {
				t.Fatalf("after close: %q %v", got, err)
			}
			if n := cc.n.Load(); n != 2 {
				t.Errorf("%d connections after a Connection: close answer; want 2", n)
			}
			// A body closed unread: its connection is not reused.
			resp, err := client.Get(srv.URL + "/big?big")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got, err := get(t, client, "GET", srv.URL+"/e", "e"); err != nil || got != "GET /e e" {
				t.Fatalf("after an unread body: %q %v", got, err)
			}
			if n := cc.n.Load(); n != 3 {
				t.Errorf("%d connections after an unread body; want 3", n)
			}
			for _, m := range []string{"POST", "PATCH"} {
				if got, err := get(t, client, m, srv.URL+"/p", m); err != nil || got != m+" /p "+m {
					t.Fatalf("%s: %q %v", m, got, err)
				}
			}
			if n := fb.n.Load(); n != 2 {
				t.Errorf("fallback carried %d requests; want the POST and the PATCH", n)
			}
		})
	}
}

// TestDirectTransportServerClosedIdle: a kept-alive connection the server
// closed while idle is noticed and the request sent again on a new one.
func TestDirectTransportServerClosedIdle(t *testing.T) {
	srv, cc := echoServer(t, false)
	_, _, client := newDirectTest(t, srv)
	for i := range 4 {
		if got, err := get(t, client, "GET", srv.URL+"/x", strconv.Itoa(i)); err != nil || got != "GET /x "+strconv.Itoa(i) {
			t.Fatalf("request %d: %q %v", i, got, err)
		}
		srv.CloseClientConnections() // the server drops the idle connection
		fixture.Until(t, fmt.Sprintf("%d connections closed", i+1), func() bool { return cc.closed.Load() == int64(i+1) })
	}
	if n := cc.n.Load(); n != 4 {
		t.Errorf("%d connections; want a new one after each close", n)
	}
}

// TestDirectTransportConcurrent: concurrent requests each get their own
// answer (stress: 16 goroutines × 50 requests, mixed framing).
func TestDirectTransportConcurrent(t *testing.T) {
	srv, cc := echoServer(t, false)
	_, _, client := newDirectTest(t, srv)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := fmt.Sprintf("%d-%d", g, i)
				q := ""
				if i%3 == 0 {
					q = "?chunked"
				}
				got, err := get(t, client, "GET", srv.URL+"/c"+q, id)
				if err != nil || got != "GET /c "+id {
					errs <- fmt.Errorf("%s: %q %v", id, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Connections are reused: 800 requests do not take one each. (How
	// many are dialled depends on scheduling: when more than
	// maxIdlePerHost requests end at once, the connections beyond the
	// idle bound are closed and dialled again later, so no figure near
	// 16+maxIdlePerHost holds on a loaded machine.)
	if n := cc.n.Load(); n > 16*50/4 {
		t.Errorf("%d connections for 800 requests of 16 concurrent clients; want most requests on a kept-alive connection", n)
	}
}

// TestDirectTransportCancel: a request whose context ends while it waits
// fails with the context's error, its connection is dropped, and the next
// request works.
func TestDirectTransportCancel(t *testing.T) {
	srv, cc := echoServer(t, false)
	_, _, client := newDirectTest(t, srv)
	if _, err := get(t, client, "GET", srv.URL+"/a", "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow?sleep=300ms", nil)
	_, err := client.Do(req)
	if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Fatalf("slow request: %v; want the deadline", err)
	}
	if got, err := get(t, client, "GET", srv.URL+"/b", "b"); err != nil || got != "GET /b b" {
		t.Fatalf("after a cancelled request: %q %v", got, err)
	}
	if n := cc.n.Load(); n != 2 {
		t.Errorf("%d connections; want the cancelled one replaced once", n)
	}
}

// TestDirectTransportProxy: a request that goes through a proxy goes to
// the fallback.
func TestDirectTransportProxy(t *testing.T) {
	dt := newDirectTransport(http.DefaultTransport)
	req, _ := http.NewRequest("GET", "http://example.invalid/x", nil)
	if !dt.direct(req) {
		t.Error("a request without a proxy was not taken directly")
	}
	proxy, _ := url.Parse("http://127.0.0.1:1")
	dt.proxy = http.ProxyURL(proxy)
	if dt.direct(req) {
		t.Error("a proxied request was taken directly")
	}
}

// TestDirectTransportSaysWhenSent: once the request is on its connection,
// and before the answer is read, directTransport tells the caller
// (connectors.CallHook's Sent), so that the runtime writes its log while the API
// works.
func TestDirectTransportSaysWhenSent(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the answer waits until the caller was told
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	_, _, client := newDirectTest(t, srv)
	sent := make(chan struct{}, 2)
	ctx := connectors.WithCallHook(context.Background(), &connectors.CallHook{OnSent: func() { sent <- struct{}{} }})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	end, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	select {
	case <-sent:
	case <-end.Done():
		close(release)
		t.Fatal("not told by the test's deadline that the request was sent")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(sent) != 0 {
		t.Errorf("told %d more times, want once", len(sent))
	}
}

// TestDirectResponseHeadBounded: an answer's head (status line and
// header) is read up to maxResponseHead, as net/http's Transport bounds
// it; past it the call fails. A server sending 64 MiB of header lines had
// them all read into memory.
func TestDirectResponseHeadBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Go(func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		line := "X-Filler: " + strings.Repeat("a", 1000) + "\r\n"
		w := bufio.NewWriter(conn)
		w.WriteString("HTTP/1.1 200 OK\r\n")
		for range (64 << 20) / len(line) {
			if _, err := w.WriteString(line); err != nil {
				return // the client stopped reading
			}
		}
		w.WriteString("Content-Length: 0\r\n\r\n")
		w.Flush()
	})
	defer func() { ln.Close(); served.Wait() }()
	dt := newDirectTransport(http.DefaultTransport)
	defer dt.CloseIdleConnections()
	client := &http.Client{Transport: dt}
	var resp *http.Response
	a := allocatedBy(func() { resp, err = client.Get("http://" + ln.Addr().String() + "/") })
	if err == nil {
		resp.Body.Close()
		t.Errorf("an answer with a 64 MiB head: %s; want an error", resp.Status)
	} else if !strings.Contains(err.Error(), "header") {
		t.Errorf("error %v; want it to name the answer's header", err)
	}
	if a > 32<<20 {
		t.Errorf("reading the answer allocated %d MiB", a>>20)
	}
}
