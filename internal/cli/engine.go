package cli

import (
	"context"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// engine is what the commands use of the durable runtime; package
// runtime's *Runtime implements it. It is the server's Engine (the same
// requests, answered the same way) and the deletions only the command line
// offers.
type engine interface {
	server.Engine
	// DeleteExecution removes a run and its log (a paused run is rejected
	// first; a running one is refused).
	DeleteExecution(ctx context.Context, id string) error
	// DeleteSnippet removes a snippet.
	DeleteSnippet(ctx context.Context, name string) error
	// Declarations returns the TypeScript declarations of one connector
	// (or of all, for "").
	Declarations(connector string) (string, error)
	// TypeDiagnostics reports what the declarations of all connectors do
	// not express exactly.
	TypeDiagnostics() []typegen.Diagnostic
	// AwaitingSignIn lists the paused runs that wait for a sign-in to a
	// connector, oldest first.
	AwaitingSignIn(ctx context.Context, connector string) ([]string, error)
	// Audit reads the audit.
	Audit(ctx context.Context, q codemode.AuditQuery) ([]codemode.AuditRecord, error)
}
