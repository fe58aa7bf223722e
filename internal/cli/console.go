package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// DefaultConsoleAddr is where codemode-mcp console listens: beside a
// server's default 127.0.0.1:8931.
const DefaultConsoleAddr = "127.0.0.1:8932"

// cmdConsole serves the approval console for a store that other
// processes use too (a stdio server's): it opens the store and the
// connectors as the approvals command does, so an approved call is made
// from here, and serves the console until interrupted.
//
// The console always asks for a token: server.auth_token when the
// configuration sets one, else one made for this run and printed on
// stderr. Without it, anyone able to reach the port (other users of the
// machine among them) could approve calls that only the owner of the
// database file can approve from the command line.
func cmdConsole(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("console", env, &c)
	addr := fs.String("addr", DefaultConsoleAddr, "listen address")
	if err := parseNone(fs, args, env.Stdout); err != nil {
		return err
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	log = newLogger(env.Stderr, cfg.Log)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer ln.Close()
	a, err := app.Open(ctx, cfg, app.Options{DBPath: c.db, Logger: log})
	if err != nil {
		return err
	}
	defer closer(a, log)()
	token := cfg.Server.AuthToken
	if token == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		token = hex.EncodeToString(b)
		scheme := "http"
		if cfg.Server.TLSCert != "" {
			scheme = "https"
		}
		fmt.Fprintf(env.Stderr, "codemode-mcp console: open %s://%s/ and log in with the token %s (made for this run; server.auth_token or %s sets one)\n", scheme, ln.Addr(), token, config.EnvToken)
	}
	return server.ServeConsole(ctx, ln, server.Options{
		HTTP: cfg.Server.HTTP,
		// Decisions made here are the OS user's, as the command line's are.
		Console: console.New(console.Options{Engine: a.Runtime, Token: token, Local: localPerson(), Logger: a.Log}),
		Logger:  a.Log,
	})
}
