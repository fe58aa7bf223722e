package server

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/config"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"golang.org/x/net/netutil"
)

// Transport names accepted by ServeHTTP and the config.
const (
	TransportStdio = "stdio"
	TransportSSE   = "sse"
	TransportHTTP  = "http"
)

// HTTP paths.
const (
	PathMCP     = "/mcp"     // streamable HTTP
	PathSSE     = "/sse"     // legacy SSE event stream
	PathMessage = "/message" // legacy SSE client messages
	PathMetrics = "/metrics" // Prometheus text (Options.Metrics)
)

// ServeStdio serves MCP over in/out until in reaches EOF or ctx ends.
// Nothing else may write to out. The task front (front.go) reads in
// before mcp-go; a line longer than server.max_body is refused there. A
// client with more than maxWaitingAnswers answers waiting (stdioOut) is
// ended: ServeStdio returns an error saying so.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	w := newStdioOut(ctx, end, out)
	f := s.newFront(ctx)
	r := &stdioFront{f: f, in: bufio.NewReader(in), out: w, max: httpDefaults(s.opts.HTTP).MaxBody}
	std := mcpserver.NewStdioServer(s.mcp)
	std.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	std.SetContextFunc(func(ctx context.Context) context.Context {
		r.sess = mcpserver.ClientSessionFromContext(ctx)
		return ctx
	})
	err := std.Listen(ctx, r, w)
	f.stop()
	w.flush()
	if cause := context.Cause(ctx); errors.Is(cause, errNotReading) {
		return fmt.Errorf("stdio transport: %w", cause)
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("stdio transport: %w", err)
}

// ServeHTTP serves MCP on ln with the given transport ("http": streamable
// HTTP at /mcp; "sse": legacy SSE at /sse and /message) until ctx ends, then
// shuts down gracefully; with Options.Console, the console is served at
// every other path. Every request passes a guard first (Host, Origin,
// bearer token, content type, body size, sessions: see guard); Options.HTTP
// bound the connections, and with a certificate the server speaks TLS.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, transport string) error {
	h := httpDefaults(s.opts.HTTP)
	srv, err := newHTTPServer(h, s.log)
	if err != nil {
		return err
	}
	// The transports answer CORS for the allowed origins. An origin no
	// browser sends ("") stands for none: given no origin, the SSE
	// transport would allow every one (Access-Control-Allow-Origin: *).
	cors := mcpserver.WithCORSAllowedOrigins(append(lowerAll(h.AllowedOrigins), "")...)
	mux := http.NewServeMux()
	g := newGuard(&s.opts, mux)
	var shutdown func(context.Context) error
	switch transport {
	case TransportHTTP:
		front := s.newFront(ctx)
		defer front.stop()
		g.sessions, g.front = newSessions(), front.serveHTTP
		hs := mcpserver.NewStreamableHTTPServer(s.mcp,
			mcpserver.WithEndpointPath(PathMCP),
			mcpserver.WithStreamableHTTPServer(srv),
			mcpserver.WithStreamableHTTPLogger(s.log),
			mcpserver.WithSessionIdManagerResolver(g.sessions),
			mcpserver.WithDisableLocalhostProtection(true), // the guard checks Host, for every listener
			mcpserver.WithStreamableHTTPCORS(cors),
		)
		g.sessions.end = func(id string) { endSession(hs, id) }
		mux.Handle(PathMCP, hs)
		shutdown, g.mcpPaths = hs.Shutdown, []string{PathMCP}
	case TransportSSE:
		g.sse = newSSEIDs()
		hs := mcpserver.NewSSEServer(s.mcp,
			mcpserver.WithSessionIDGenerator(g.sse.generate),
			mcpserver.WithSSEEndpoint(PathSSE),
			mcpserver.WithMessageEndpoint(PathMessage),
			mcpserver.WithUseFullURLForMessageEndpoint(false),
			mcpserver.WithKeepAlive(true),
			mcpserver.WithHTTPServer(srv),
			mcpserver.WithSSEDisableLocalhostProtection(true), // the guard checks Host, for every listener
			mcpserver.WithSSECORS(cors),
		)
		mux.Handle(PathSSE, hs)
		mux.Handle(PathMessage, hs)
		shutdown, g.mcpPaths = hs.Shutdown, []string{PathSSE, PathMessage}
	default:
		return fmt.Errorf("unknown HTTP transport %q (want %q or %q)", transport, TransportHTTP, TransportSSE)
	}
	if s.opts.Auth != nil {
		rs, err := newResourceServer(s.opts.Auth, strings.TrimSuffix(baseURL(srv.TLSConfig != nil, ln.Addr().String()), "/")+g.mcpPaths[0], &s.opts)
		if err != nil {
			return err
		}
		defer rs.v.Close()
		g.rs, g.bearer = rs, rs
		if err := g.signInToConsole(s.opts.Auth.Console); err != nil {
			return err
		}
	}
	srv.Handler = g
	useTLS, addr := srv.TLSConfig != nil, ln.Addr().String()
	s.log.Info("serving MCP", "transport", transport, "addr", addr, "tls", useTLS, "auth", s.opts.authInForce())
	if s.opts.Console != nil {
		s.log.Info("approval console", "url", baseURL(useTLS, addr))
	}
	return serveHTTP(ctx, transport+" transport", srv, ln, h.MaxConnections, s.log, shutdown)
}

// endSession ends streamable-HTTP session id in hs as its client's
// DELETE would (mcp-go offers no other way to drop its state).
func endSession(hs http.Handler, id string) {
	r, err := http.NewRequest(http.MethodDelete, PathMCP, http.NoBody)
	if err != nil {
		return // (a constant URL)
	}
	r.Header.Set(mcpserver.HeaderKeySessionID, id)
	hs.ServeHTTP(discardResponse{}, r)
}

// discardResponse is a response nobody reads.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (discardResponse) WriteHeader(int)             {}

// authInForce says which authentication the HTTP transports require, for
// the log: "none", or a bearer token and where it came from; never the
// token.
func (o *Options) authInForce() string {
	switch {
	case o.Auth != nil:
		return "access tokens of " + o.Auth.Issuer
	case o.AuthToken == "":
		return "none"
	case o.AuthTokenFrom == "":
		return "bearer token"
	}
	return "bearer token from " + o.AuthTokenFrom
}

// ServeConsole serves opts.Console alone on ln (codemode-mcp console),
// behind the guard's Host check and with the bounds of opts.HTTP, until
// ctx ends. Of opts it uses HTTP, Console and Logger.
func ServeConsole(ctx context.Context, ln net.Listener, opts Options) error {
	if opts.Console == nil {
		return errors.New("ServeConsole: no console")
	}
	return serveAlone(ctx, ln, opts, "console", "approval console", "url", baseURL(opts.HTTP.TLSCert != "", ln.Addr().String()))
}

// ServeMetrics serves opts.Metrics alone at PathMetrics on ln (serve
// --metrics-addr), in plain HTTP and without authentication, behind the
// guard's Host and Origin checks (a page that rebinds its DNS name to a
// loopback listener cannot read it) and with the bounds of opts.HTTP,
// until ctx ends. Of opts it uses HTTP (not its certificate), Metrics and
// Logger.
func ServeMetrics(ctx context.Context, ln net.Listener, opts Options) error {
	if opts.Metrics == nil {
		return errors.New("ServeMetrics: no metrics")
	}
	opts.HTTP.TLSCert, opts.HTTP.TLSKey = "", ""
	opts.AuthToken, opts.Console = "", nil
	return serveAlone(ctx, ln, opts, "metrics listener", "serving metrics", "url", "http://"+ln.Addr().String()+PathMetrics, "auth", "none")
}

// serveAlone serves what opts names on ln behind a guard without MCP
// endpoints, until ctx ends; name is what errors say failed, and msg with
// args the log line that says it serves.
func serveAlone(ctx context.Context, ln net.Listener, opts Options, name, msg string, args ...any) error {
	log := cmp.Or(opts.Logger, slog.Default())
	h := httpDefaults(opts.HTTP)
	srv, err := newHTTPServer(h, log)
	if err != nil {
		return err
	}
	srv.Handler = newGuard(&opts, http.NotFoundHandler())
	log.Info(msg, args...)
	return serveHTTP(ctx, name, srv, ln, h.MaxConnections, log, srv.Shutdown)
}

// baseURL is where a browser finds the server listening on addr.
func baseURL(useTLS bool, addr string) string {
	if useTLS {
		return "https://" + addr + "/"
	}
	return "http://" + addr + "/"
}

// maxStreams is how many requests one HTTP/2 connection (with TLS) carries
// at once (Go's default is 250): h.MaxConnections times it bounds the
// requests served at once, as h.MaxConnections does over HTTP/1.1. It is
// enough for a client's listening stream and calls in progress; a Go
// client opens another connection for more.
const maxStreams = 16

// newHTTPServer returns an http.Server with the bounds of h, speaking TLS
// when h names a certificate.
func newHTTPServer(h config.HTTP, log *slog.Logger) (*http.Server, error) {
	srv := &http.Server{
		ReadHeaderTimeout: h.ReadTimeout,
		IdleTimeout:       h.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
	}
	if h.TLSCert != "" || h.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate %s and key %s: %w", h.TLSCert, h.TLSKey, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return srv, nil
}

// serveHTTP serves srv on ln (at most maxConns connections at once) until
// ctx ends, then shuts it down: shutdown first (the transport's own, which
// ends its streams), then whatever is left after a grace period. name is
// what errors say failed.
func serveHTTP(ctx context.Context, name string, srv *http.Server, ln net.Listener, maxConns int, log *slog.Logger, shutdown func(context.Context) error) error {
	ln = netutil.LimitListener(ln, maxConns) // Accept waits while maxConns are open
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("HTTP shutdown", "err", err)
	}
	_ = srv.Close() // whatever is left after the grace period
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
