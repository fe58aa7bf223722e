package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"go.opentelemetry.io/otel"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
	"github.com/codemode-mcp/codemode-mcp/server"
)

func cmdServe(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("serve", env, &c)
	transport := fs.String("transport", "", "stdio | sse | http (default: server.transport, else stdio)")
	addr := fs.String("addr", "", "listen address for sse/http (default: server.addr, else 127.0.0.1:8931)")
	insecure := fs.Bool("insecure-no-auth", false, "serve sse/http beyond loopback without server.auth_token or server.auth (anyone who can reach it can run programs)")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus text at /metrics on this address of its own, without authentication, e.g. "+config.DefaultMetricsAddr+" (default: telemetry.metrics.addr)")
	if err := parseNone(fs, args, env.Stdout); err != nil {
		return err
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	cfg.Server.Transport = cmp.Or(*transport, cfg.Server.Transport)
	cfg.Server.Addr = cmp.Or(*addr, cfg.Server.Addr)
	if *metricsAddr != "" {
		if err := config.CheckListenAddr(*metricsAddr); err != nil {
			return usagef("--metrics-addr: %v", err)
		}
		cfg.Telemetry.Metrics.Addr = *metricsAddr
	}
	log = newLogger(env.Stderr, cfg.Log)
	switch cfg.Server.Transport {
	case server.TransportStdio, server.TransportSSE, server.TransportHTTP:
	default:
		return usagef("--transport %q: want stdio, sse or http", cfg.Server.Transport)
	}
	// Listen before starting connectors so a busy port fails fast.
	var ln net.Listener
	if cfg.Server.Transport != server.TransportStdio {
		ln, err = net.Listen("tcp", cfg.Server.Addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
		}
		defer ln.Close()
		if err := server.CheckAuthAddr(httpAuth(cfg), ln.Addr()); err != nil {
			return usagef("%v", err)
		}
		if cfg.Server.AuthToken == "" && cfg.Server.Auth == nil && !isLoopback(ln.Addr()) {
			if !*insecure {
				return usagef("refusing to serve on %s (not loopback) without server.auth_token, %s or server.auth: anyone who can reach it could run programs; set a token (%s=…, or server.auth_token) or an issuer (server.auth.issuer), listen on 127.0.0.1, or pass --insecure-no-auth", ln.Addr(), config.EnvToken, config.EnvToken)
			}
			log.Warn("serving on a non-loopback address without server.auth_token or "+config.EnvToken+" (--insecure-no-auth): anyone who can reach it can run programs", "addr", ln.Addr().String())
		}
	}
	m, mln, err := startMetrics(ctx, cfg, log)
	if err != nil {
		return err
	}
	if mln != nil {
		defer mln.Close()
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := m.Shutdown(sctx); err != nil {
			log.Warn("metrics shutdown", "err", err)
		}
	}()
	a, err := app.Open(ctx, cfg, app.Options{DBPath: c.db, Logger: log, Metrics: m})
	if err != nil {
		return err
	}
	if m != nil {
		// OpenTelemetry reports export and collection failures to a global
		// handler that writes to the standard logger: they go to this log
		// instead, scrubbed and in its format.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { a.Log.Warn("telemetry", "err", err) }))
	}
	defer closer(a, log)()
	if err := a.Runtime.Join(ctx); err != nil {
		return err
	}
	// One count of wrong tokens per client address for the MCP endpoints
	// and the console's login, which share the listener.
	failures := throttle.New(0, 0, nil)
	var cons http.Handler
	if cfg.Server.Transport != server.TransportStdio && cfg.Approvals.Console {
		cons = console.New(console.Options{Engine: a.Runtime, Token: cfg.Server.AuthToken, Failures: failures, Logger: a.Log})
	}
	if mln != nil {
		mctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := server.ServeMetrics(mctx, mln, server.Options{HTTP: cfg.Server.HTTP, Metrics: m.Handler(), Logger: a.Log}); err != nil {
				a.Log.Error("metrics listener", "err", err)
			}
		}()
		defer func() {
			stop()
			<-done
		}()
	}
	budget := cfg.Server.DescriptionBudget
	if budget == 0 {
		budget = -1 // never inline: 0 is the default there
	}
	srv := server.New(server.Options{
		Name:              cfg.Server.Name,
		Version:           version(),
		Runtime:           a.Runtime,
		Elicitation:       cfg.Approvals.Elicitation,
		AuthToken:         cfg.Server.AuthToken,
		AuthTokenFrom:     cfg.Server.AuthTokenFrom,
		Auth:              httpAuth(cfg),
		AuthFailures:      failures,
		HTTP:              cfg.Server.HTTP,
		WithholdApprovals: !cfg.Approvals.Tools,
		DescriptionBudget: budget,
		MaxResultChars:    cfg.Sandbox.MaxResultChars,
		Console:           cons,
		TraceContext:      a.Tracing != nil,
		Metrics:           m.Handler(),
		Logger:            a.Log,
	})
	a.OnConnectorsChanged(srv.ConnectorsChanged)
	if cfg.Server.Transport == server.TransportStdio {
		log.Info("serving MCP", "transport", "stdio", "connectors", len(a.Connectors))
		if isTerminal(env.Stdin) {
			// A person typed the command an MCP client starts: else it
			// just sits there, reading JSON-RPC from the keyboard.
			fmt.Fprintln(env.Stderr, "codemode-mcp: serve waits for an MCP client on stdin (configure your client to start this command; Ctrl-C ends it; --transport http serves on an address)")
		}
		return srv.ServeStdio(ctx, env.Stdin, env.Stdout)
	}
	return srv.ServeHTTP(ctx, ln, cfg.Server.Transport)
}

// isTerminal reports whether r is a terminal (a person typing, not a
// client's pipe).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// startMetrics makes the metrics telemetry.metrics and the environment
// ask for (nil when none: metrics off), and listens on
// telemetry.metrics.addr when it is set, before anything starts, so that
// a busy port fails fast.
func startMetrics(ctx context.Context, cfg *config.Config, log *slog.Logger) (*telemetry.Metrics, net.Listener, error) {
	prom, otlp, err := cfg.Telemetry.Metrics.Exporters(os.LookupEnv)
	if err != nil {
		return nil, nil, usageError{err}
	}
	var ln net.Listener
	if cfg.Telemetry.Metrics.Addr != "" {
		if ln, err = net.Listen("tcp", cfg.Telemetry.Metrics.Addr); err != nil {
			return nil, nil, fmt.Errorf("listen on %s for metrics: %w", cfg.Telemetry.Metrics.Addr, err)
		}
		if !isLoopback(ln.Addr()) {
			log.Warn("serving metrics on a non-loopback address without authentication: anyone who can reach it can read them", "addr", ln.Addr().String())
		}
	} else if prom && cfg.Server.Transport == server.TransportStdio {
		log.Warn("Prometheus metrics are asked for, but the stdio transport has no /metrics: set telemetry.metrics.addr or --metrics-addr")
	}
	m, err := telemetry.NewMetrics(ctx, telemetry.MetricsOptions{Prometheus: prom, OTLP: otlp, MethodNames: cfg.Telemetry.Metrics.MethodNames, ServiceName: cfg.Telemetry.ServiceName})
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, nil, err
	}
	return m, ln, nil
}

// httpAuth is server.auth for the HTTP transports; stdio has no tokens
// (whoever starts the process is its one user).
func httpAuth(cfg *config.Config) *config.ServerAuth {
	if cfg.Server.Transport == server.TransportStdio {
		return nil
	}
	return cfg.Server.Auth
}

func isLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return false
}
