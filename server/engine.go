package server

import (
	"context"
	"encoding/json"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Engine is what the server needs of the durable runtime; package runtime's
// *Runtime implements it. Its methods must be safe for concurrent use. An
// error that codemode.IsRefusal reports is a request the client can
// correct (shown as an outcome with the execution's status); any other
// error is an internal failure.
type Engine interface {
	// Execute runs a new program; ap (nil: none) is asked about calls that
	// need approval before the run pauses.
	Execute(ctx context.Context, code string, ap codemode.Approver) (codemode.Outcome, error)
	// Approve resumes a paused run with its pending actions approved.
	Approve(ctx context.Context, id string, ap codemode.Approver) (codemode.Outcome, error)
	// Reject ends a paused run rejected (seq > 0: that pending action).
	Reject(ctx context.Context, id string, seq int) (codemode.Outcome, error)
	// RejectReviewed is Reject for a person who was shown the pending
	// actions (codemode.Review).
	RejectReviewed(ctx context.Context, id string, seq int, rv codemode.Review) (codemode.Outcome, error)

	// Start runs a new program as a task and returns at once (running, or
	// the outcome of a program refused before anything was stored); the
	// run goes on in the background, and the observer in ctx hears it.
	Start(ctx context.Context, code string, t codemode.Task) (codemode.Outcome, error)
	// Resume approves a paused run for a person who was shown its pending
	// actions through the client that polls it as a task; a task goes on
	// in the background (running).
	Resume(ctx context.Context, id string, rv codemode.Review) (codemode.Outcome, error)
	// Cancel ends a task that runs or waits, cancelled, with reason as
	// its error.
	Cancel(ctx context.Context, id, reason string) (codemode.Outcome, error)
	// Await returns run id as stored once until reports true of it (at
	// once when it already does; another process's change is seen within
	// poll, 0: the engine's default), or ctx's error.
	Await(ctx context.Context, id string, poll time.Duration, until func(*codemode.Execution) bool) (*codemode.Execution, error)
	// Outcome is the outcome of a run as stored: what a plain call that
	// ran its last pass returned.
	Outcome(ctx context.Context, id string) (codemode.Outcome, error)
	// Rollback reverts a run's applied, revertible calls, newest first.
	Rollback(ctx context.Context, id string) (codemode.Outcome, error)
	// Pending lists the actions awaiting approval, their arguments whole
	// (id "": of every paused run).
	Pending(ctx context.Context, id string) ([]codemode.PendingAction, error)
	// Executions lists runs newest first.
	Executions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error)
	// ExecutionLog returns one run and the part of its log q selects,
	// values cut as q says.
	ExecutionLog(ctx context.Context, id string, q codemode.LogQuery) (*codemode.Execution, []codemode.ClippedEntry, error)
	// Snippets lists the saved snippets by name.
	Snippets(ctx context.Context) ([]codemode.Snippet, error)
	// SaveSnippet saves a completed run's program as a snippet.
	SaveSnippet(ctx context.Context, name, executionID, description string, inputSchema json.RawMessage) (codemode.Snippet, error)
	// RefusalOutcome is the outcome shown for a refused request about
	// execution id.
	RefusalOutcome(ctx context.Context, id string, err error) codemode.Outcome

	// Connectors describes the connectors in configuration order.
	Connectors() []codemode.ConnectorInfo
	// DeclarationsWithin returns the TypeScript declarations of every
	// connector when they come to at most budget tokens (as
	// internal/tokens estimates them; fits false otherwise, without
	// generating them when they cannot fit).
	DeclarationsWithin(budget int) (decls string, fits bool)
	// BeginSignIn starts a person's sign-in to a connector that needs one
	// (connectors.SignIner); the attempt's Wait returns once the tokens
	// are stored and the connector's tools listed again.
	BeginSignIn(ctx context.Context, connector string) (connectors.SignInAttempt, error)
}
