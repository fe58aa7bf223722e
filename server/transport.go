package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
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
)

// ServeStdio serves MCP over in/out until in reaches EOF or ctx ends.
// Nothing else may write to out.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	std := mcpserver.NewStdioServer(s.mcp)
	std.SetErrorLogger(slogLogger(s.log))
	err := std.Listen(ctx, in, out)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("stdio transport: %w", err)
}

// ServeHTTP serves MCP on ln with the given transport ("http": streamable
// HTTP at /mcp; "sse": legacy SSE at /sse and /message) until ctx ends, then
// shuts down gracefully. A non-empty AuthToken is required as a Bearer token.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, transport string) error {
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: slogLogger(s.log)}
	var shutdown func(context.Context) error
	mux := http.NewServeMux()
	switch transport {
	case TransportHTTP:
		h := mcpserver.NewStreamableHTTPServer(s.mcp,
			mcpserver.WithEndpointPath(PathMCP),
			mcpserver.WithStreamableHTTPServer(srv),
			mcpserver.WithStreamableHTTPLogger(s.log),
		)
		mux.Handle(PathMCP, h)
		shutdown = h.Shutdown
	case TransportSSE:
		h := mcpserver.NewSSEServer(s.mcp,
			mcpserver.WithSSEEndpoint(PathSSE),
			mcpserver.WithMessageEndpoint(PathMessage),
			mcpserver.WithUseFullURLForMessageEndpoint(false),
			mcpserver.WithKeepAlive(true),
			mcpserver.WithHTTPServer(srv),
		)
		mux.Handle(PathSSE, h)
		mux.Handle(PathMessage, h)
		shutdown = h.Shutdown
	default:
		return fmt.Errorf("unknown HTTP transport %q (want %q or %q)", transport, TransportHTTP, TransportSSE)
	}
	srv.Handler = requireToken(s.opts.AuthToken, mux)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("serving MCP", "transport", transport, "addr", ln.Addr().String())

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("%s transport: %w", transport, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("HTTP shutdown", "err", err)
	}
	_ = srv.Close() // whatever is left after the grace period
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s transport: %w", transport, err)
	}
	return nil
}

// requireToken wraps h with Bearer token authentication when token is set.
func requireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="codemode-mcp"`)
			http.Error(w, "missing or invalid bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// slogLogger adapts a slog.Logger for libraries that want a *log.Logger.
func slogLogger(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}
