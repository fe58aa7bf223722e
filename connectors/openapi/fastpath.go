package openapi

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

// directTransport is an http.RoundTripper for the requests a program makes
// most, that makes them on the calling goroutine: it writes the request on
// a kept-alive connection and reads the answer itself, where net/http's
// Transport hands each request to a writing and a reading goroutine of the
// connection's. On a machine whose idle CPUs halt, each such hand-off wakes
// a thread, and they are most of what a GET through a program costs beyond
// the request itself (BENCHMARKS.md, "A GET through a program").
//
// Invariants:
//   - It carries only idempotent requests (GET, HEAD, OPTIONS, TRACE, PUT,
//     DELETE) to http and https URLs with no proxy configured for them;
//     everything else goes to fallback, unchanged.
//   - A connection goes back to the pool only once its response body was
//     read to its end and neither side asked to close it; otherwise it is
//     closed.
//   - A request on a kept-alive connection that fails before a byte of the
//     answer arrived (the server closed the idle connection) is sent again
//     once, on a new connection: it is idempotent.
//   - The request's context bounds the whole exchange: its deadline is the
//     connection's, and its cancellation closes the connection.
type directTransport struct {
	fallback http.RoundTripper
	dialer   net.Dialer
	tls      *tls.Config // nil: the defaults, with the request's host as ServerName
	// proxy says which requests go through a proxy (those go to fallback).
	proxy func(*http.Request) (*url.URL, error)

	mu   sync.Mutex
	idle map[string][]*directConn // by scheme://host:port; guarded by mu
}

// maxResponseHead bounds an answer's status line and header, on this
// transport and on the fallback (newCaller sets its
// MaxResponseHeaderBytes).
const maxResponseHead = 1 << 20

// maxIdlePerHost bounds the kept-alive connections to one origin.
const maxIdlePerHost = 8

// idleTimeout is how long an idle connection is kept.
const idleTimeout = 30 * time.Second

type directConn struct {
	key  string
	conn net.Conn
	head *io.LimitedReader // what br reads: N bounds an answer's head
	br   *bufio.Reader
	bw   *bufio.Writer
	idle time.Time // when it went back to the pool
}

func newDirectTransport(fallback http.RoundTripper) *directTransport {
	return &directTransport{fallback: fallback, proxy: http.ProxyFromEnvironment, idle: map[string][]*directConn{}}
}

// RoundTrip makes one request (see directTransport).
func (t *directTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.direct(req) {
		return t.fallback.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		dc, reused, err := t.get(req.Context(), req)
		if err != nil {
			return nil, err
		}
		resp, started, err := t.exchange(req, dc)
		if err == nil {
			return resp, nil
		}
		dc.conn.Close()
		if !reused || started || attempt > 0 || req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
			return nil, err
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// direct reports whether a request is one directTransport carries.
func (t *directTransport) direct(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
	default:
		return false
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return false
	}
	p, err := t.proxy(req)
	return err == nil && p == nil
}

func canonicalAddr(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}

// get returns an idle connection to req's scheme, host and port, or dials
// one.
func (t *directTransport) get(ctx context.Context, req *http.Request) (*directConn, bool, error) {
	addr := canonicalAddr(req)
	key := req.URL.Scheme + "://" + addr
	now := time.Now()
	t.mu.Lock()
	for list := t.idle[key]; len(list) > 0; list = t.idle[key] {
		dc := list[len(list)-1]
		t.idle[key] = list[:len(list)-1]
		if now.Sub(dc.idle) < idleTimeout {
			t.mu.Unlock()
			return dc, true, nil
		}
		dc.conn.Close()
	}
	t.mu.Unlock()
	conn, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		conn = rawpipe.WrapConn(tc, rawpipe.Spin) // its answer usually comes within the polling
	}
	if req.URL.Scheme == "https" {
		cfg := cmp.Or(t.tls, &tls.Config{}).Clone()
		cfg.ServerName = cmp.Or(cfg.ServerName, req.URL.Hostname())
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, false, err
		}
		conn = tc
	}
	head := &io.LimitedReader{R: conn, N: math.MaxInt64}
	return &directConn{key: key, conn: conn, head: head, br: bufio.NewReader(head), bw: bufio.NewWriter(conn)}, false, nil
}

// put returns a connection to the pool.
func (t *directTransport) put(dc *directConn) {
	dc.conn.SetDeadline(time.Time{})
	dc.idle = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[dc.key]) >= maxIdlePerHost {
		dc.conn.Close()
		return
	}
	t.idle[dc.key] = append(t.idle[dc.key], dc)
}

// CloseIdleConnections closes the pooled connections, and the fallback's
// (http.Client.CloseIdleConnections calls it).
func (t *directTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, list := range t.idle {
		for _, dc := range list {
			dc.conn.Close()
		}
		delete(t.idle, k)
	}
	if c, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// exchange writes req on dc and reads the answer's head; started reports
// that a byte of the answer arrived (the request then is not sent again).
func (t *directTransport) exchange(req *http.Request, dc *directConn) (*http.Response, bool, error) {
	ctx := req.Context()
	// When ctx ends (its deadline too), blocked reads and writes return at
	// once; ctx.Err() is then set, and is the error.
	stop := context.AfterFunc(ctx, func() { dc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) error {
		stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if err := req.Write(dc.bw); err != nil {
		return nil, false, fail(err)
	}
	if err := dc.bw.Flush(); err != nil {
		return nil, false, fail(err)
	}
	connectors.CallHookFrom(ctx).Sent() // the runtime writes its log while the API works
	// The head, informational answers included, is read up to
	// maxResponseHead (net/http's Transport bounds it too); the body is
	// the caller's to bound.
	dc.head.N = maxResponseHead
	if _, err := dc.br.Peek(1); err != nil {
		return nil, false, fail(err)
	}
	resp, err := http.ReadResponse(dc.br, req)
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(dc.br, req) // an informational answer: the final one follows
	}
	if err != nil && dc.head.N <= 0 {
		err = fmt.Errorf("the answer's header is larger than %d KiB", maxResponseHead>>10)
	}
	if err != nil {
		return nil, true, fail(err)
	}
	dc.head.N = math.MaxInt64
	resp.Body = &directBody{t: t, dc: dc, body: resp.Body, stop: stop, keep: !resp.Close && !req.Close, ctxErr: ctx.Err}
	return resp, true, nil
}

// directBody returns its connection to the pool once read to its end.
type directBody struct {
	t      *directTransport
	dc     *directConn
	body   io.ReadCloser
	stop   func() bool
	ctxErr func() error
	keep   bool

	once sync.Once
	eof  bool
}

func (b *directBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	if err != nil && !b.eof {
		if cerr := b.ctxErr(); cerr != nil {
			err = cerr
		}
	}
	return n, err
}

func (b *directBody) Close() error {
	b.once.Do(func() {
		stopped := b.stop()
		b.body.Close()
		if b.eof && b.keep && stopped {
			b.t.put(b.dc)
			return
		}
		b.dc.conn.Close()
	})
	return nil
}
