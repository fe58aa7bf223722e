package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
	"github.com/codemode-mcp/codemode-mcp/server"
)

func cmdServe(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("serve", env, &c, true)
	transport := fs.String("transport", "", "stdio | sse | http (default: server.transport, else stdio)")
	addr := fs.String("addr", "", "listen address for sse/http (default: server.addr, else 127.0.0.1:8931)")
	insecure := fs.Bool("insecure-no-auth", false, "serve sse/http beyond loopback without server.auth_token or server.auth (anyone who can reach it can run programs)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments, got %q", pos)
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	if *transport != "" {
		cfg.Server.Transport = *transport
	}
	if *addr != "" {
		cfg.Server.Addr = *addr
	}
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
	a, err := openAppFrom(ctx, cfg, c, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := a.Close(); err != nil {
			log.Warn("shutdown", "err", err)
		}
	}()
	for _, w := range a.Warnings {
		a.Log.Warn(w)
	}
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
		DescriptionBudget: descriptionBudget(cfg.Server.DescriptionBudget),
		MaxResultChars:    cfg.Sandbox.MaxResultChars,
		Console:           cons,
		TraceContext:      a.Tracing != nil,
		Logger:            a.Log,
	})
	a.OnConnectorsChanged(srv.ConnectorsChanged)
	if cfg.Server.Transport == server.TransportStdio {
		stdin := env.Stdin
		if stdin == nil {
			stdin = os.Stdin
		}
		log.Info("serving MCP", "transport", "stdio", "connectors", len(a.Connectors))
		return srv.ServeStdio(ctx, stdin, env.Stdout)
	}
	return srv.ServeHTTP(ctx, ln, cfg.Server.Transport)
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

// descriptionBudget maps server.description_budget to
// server.Options.DescriptionBudget: 0 (never inline) is negative there.
func descriptionBudget(tokens int) int {
	if tokens == 0 {
		return -1
	}
	return tokens
}
