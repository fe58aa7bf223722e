package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
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
// shuts down gracefully. Every request passes a guard first (Host, Origin,
// bearer token, content type, body size, sessions: see guard); HTTPOptions
// bound the connections, and with a certificate the server speaks TLS.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, transport string) error {
	h := httpDefaults(s.opts.HTTP)
	srv := &http.Server{
		ReadHeaderTimeout: h.ReadTimeout,
		IdleTimeout:       h.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slogLogger(s.log),
	}
	if h.TLSCert != "" || h.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS certificate %s and key %s: %w", h.TLSCert, h.TLSKey, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var cors []mcpserver.CORSOption
	if len(h.AllowedOrigins) > 0 {
		cors = []mcpserver.CORSOption{mcpserver.WithCORSAllowedOrigins(lowerAll(h.AllowedOrigins)...)}
	}
	var shutdown func(context.Context) error
	var sess *sessions
	mux := http.NewServeMux()
	switch transport {
	case TransportHTTP:
		sess = newSessions()
		opts := []mcpserver.StreamableHTTPOption{
			mcpserver.WithEndpointPath(PathMCP),
			mcpserver.WithStreamableHTTPServer(srv),
			mcpserver.WithStreamableHTTPLogger(s.log),
			mcpserver.WithSessionIdManager(sess),
			mcpserver.WithDisableLocalhostProtection(true), // the guard checks Host, for every listener
		}
		if cors != nil {
			opts = append(opts, mcpserver.WithStreamableHTTPCORS(cors...))
		}
		hs := mcpserver.NewStreamableHTTPServer(s.mcp, opts...)
		mux.Handle(PathMCP, hs)
		shutdown = hs.Shutdown
	case TransportSSE:
		opts := []mcpserver.SSEOption{
			mcpserver.WithSSEEndpoint(PathSSE),
			mcpserver.WithMessageEndpoint(PathMessage),
			mcpserver.WithUseFullURLForMessageEndpoint(false),
			mcpserver.WithKeepAlive(true),
			mcpserver.WithHTTPServer(srv),
			mcpserver.WithSSEDisableLocalhostProtection(true), // the guard checks Host, for every listener
		}
		if cors != nil {
			opts = append(opts, mcpserver.WithSSECORS(cors...))
		}
		hs := mcpserver.NewSSEServer(s.mcp, opts...)
		mux.Handle(PathSSE, hs)
		mux.Handle(PathMessage, hs)
		shutdown = hs.Shutdown
	default:
		return fmt.Errorf("unknown HTTP transport %q (want %q or %q)", transport, TransportHTTP, TransportSSE)
	}
	srv.Handler = newGuard(&s.opts, sess, mux)

	ln = limitListener(ln, h.MaxConnections)
	useTLS := srv.TLSConfig != nil
	errc := make(chan error, 1)
	go func() {
		if useTLS {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	s.log.Info("serving MCP", "transport", transport, "addr", ln.Addr().String(), "tls", useTLS)

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

// slogLogger adapts a slog.Logger for libraries that want a *log.Logger.
func slogLogger(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}
