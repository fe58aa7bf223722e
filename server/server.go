// Package server exposes the runtime to MCP clients: the codemode tool and
// the approval, history and snippet tools the README lists under "What the
// client sees" (tools.go registers them), over stdio,
// legacy SSE and streamable HTTP. It is the only package besides the MCP
// connector that imports mcp-go.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/console"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// Options configure a Server.
type Options struct {
	Name    string // server name reported to clients (default "codemode")
	Version string
	// Runtime is the durable runtime the tools drive (a *runtime.Runtime).
	Runtime Engine
	// Elicitation asks the user through the client (when it declares the
	// capability) before a call that needs approval, instead of pausing,
	// and, when the client can open links (URL-mode elicitation), to sign
	// in to a connector a run waits for.
	Elicitation bool
	// AuthToken, when set, is the Bearer token required on SSE and HTTP.
	AuthToken string
	// Auth, when set, makes SSE and HTTP an OAuth resource server for the
	// team's issuer (server.auth; resource.go): every request to the MCP
	// endpoints needs an access token it issued for this server, whose
	// Principal the request's context then carries (codemode.PrincipalFrom),
	// and each tool its scope (ToolScopes). AuthToken must then be "".
	Auth *config.ServerAuth
	// AuthTokenFrom says where AuthToken came from (config.Server's
	// AuthTokenFrom), for the log line that says which authentication is
	// in force.
	AuthTokenFrom string
	// AuthFailures limits wrong bearer tokens per client address (429
	// past its limit) and the log lines about them; share one with the
	// console so that its logins count against the same addresses. nil:
	// a Failures of the server's own with throttle's defaults.
	AuthFailures *throttle.Failures
	// HTTP bounds and guards the SSE and HTTP transports; zero fields
	// take the defaults (httpDefaults).
	HTTP config.HTTP
	// WithholdApprovals leaves codemode_approve, codemode_reject and
	// codemode_rollback out of the tools offered to clients, so the model
	// cannot approve its own calls (approvals.tools: false). Approval then
	// comes through elicitation or the command line.
	WithholdApprovals bool
	// DescriptionBudget is how many tokens of TypeScript declarations
	// the codemode tool's description may carry inline (estimated by
	// internal/tokens); past it the description tells the model to use
	// codemode.search and codemode.describe. 0 means
	// config.DefaultDescriptionBudget; negative never inlines them.
	DescriptionBudget int
	// MaxResultChars bounds what tools show of a run: its result (or
	// error message) and its console lines together, measured as
	// internal/truncate defines, cut structurally to it (valid JSON of the
	// same shape, largest values first, with visible markers), and its
	// pending actions' arguments, and the audit trail's answers
	// (codemode_executions). The store keeps them whole. 0 shows
	// everything.
	MaxResultChars int
	// Console, when set, is served on the HTTP transports at every path
	// but the MCP endpoints (the approval console, package console). It
	// does its own authentication: the guard checks only the Host of its
	// requests (see guard).
	Console http.Handler
	// TraceContext continues the trace a client sends: the W3C
	// traceparent (and tracestate) of a tools/call's _meta, or of the HTTP
	// request's headers, becomes the parent of the spans of the runs it
	// drives (the runtime's tracer makes them). Set when tracing is on;
	// unset, a client's trace context is not read.
	TraceContext bool
	// Metrics, when set, serves Prometheus text at PathMetrics on the HTTP
	// transports, behind the same checks as the MCP endpoints (Host,
	// Origin, the bearer token).
	Metrics http.Handler
	Logger  *slog.Logger
}

// httpDefaults fills the zero fields of h with the defaults.
func httpDefaults(h config.HTTP) config.HTTP {
	h.MaxBody = cmp.Or(h.MaxBody, 4<<20)
	h.ReadTimeout = cmp.Or(h.ReadTimeout, 30*time.Second)
	h.WriteTimeout = cmp.Or(h.WriteTimeout, 30*time.Second)
	h.IdleTimeout = cmp.Or(h.IdleTimeout, 120*time.Second)
	h.MaxConnections = cmp.Or(h.MaxConnections, 64)
	return h
}

// Server is the MCP face of one runtime.
type Server struct {
	// fixed at creation
	opts Options
	rt   Engine
	mcp  *mcpserver.MCPServer
	log  *slog.Logger

	// clients holds the sessions mcp-go registered, by id, for the
	// requests the task front answers (front.go).
	clients sync.Map
	// asking holds, by task id, the *asking of the request that asks the
	// person about the task's pause (askPaused).
	asking sync.Map
	// tasksServed is set once a transport that serves tasks (stdio,
	// streamable HTTP) starts: from then on clients are told of tasks.
	tasksServed atomic.Bool
}

// New builds the MCP server and registers its tools.
func New(opts Options) *Server {
	opts.Name = cmp.Or(opts.Name, "codemode")
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	s := &Server{opts: opts, rt: opts.Runtime, log: opts.Logger}
	s.mcp = mcpserver.NewMCPServer(opts.Name, opts.Version,
		mcpserver.WithToolCapabilities(true), // the codemode tool changes with the connectors
		mcpserver.WithElicitation(),
		mcpserver.WithLegacyServerInitiatedRequests(),
		mcpserver.WithRecovery(),
		mcpserver.WithLogging(),
		mcpserver.WithHooks(s.hooks()),
		mcpserver.WithInstructions("Use the codemode tool: write one program that calls the connectors; search and describe them from inside the program."),
	)
	s.register()
	return s
}

// hooks keeps the registry of sessions the task front reads, weighs the
// tools/call answers a legacy SSE stream is to carry (sseStream.hold), and, once a
// transport serves tasks, declares them: the tasks capability (2025-11-25)
// or extension (2026-07-28), and taskSupport optional on the codemode tool.
func (s *Server) hooks() *mcpserver.Hooks {
	h := &mcpserver.Hooks{}
	h.AddOnRegisterSession(func(_ context.Context, sess mcpserver.ClientSession) { s.clients.Store(sess.SessionID(), sess) })
	h.AddOnUnregisterSession(func(_ context.Context, sess mcpserver.ClientSession) {
		s.clients.CompareAndDelete(sess.SessionID(), sess)
	})
	h.AddAfterCallTool(func(ctx context.Context, id any, _ *mcp.CallToolRequest, res any) {
		if st, ok := ctx.Value(sseStreamKey{}).(*sseStream); ok { // a legacy SSE session's
			if r, ok := res.(*mcp.CallToolResult); ok {
				st.hold(id, r)
			}
		}
	})
	h.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if s.tasksServed.Load() {
			res.Capabilities.Tasks = mcp.NewTasksCapability() // list, cancel and tools/call
		}
	})
	h.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if s.tasksServed.Load() {
			ext := map[string]any{tasksExtension: map[string]any{}}
			maps.Copy(ext, res.Capabilities.Extensions)
			res.Capabilities.Extensions = ext
		}
	})
	h.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if !s.tasksServed.Load() || mcpserver.IsModernRequest(ctx) {
			return
		}
		for i := range res.Tools {
			if res.Tools[i].Name == "codemode" {
				res.Tools[i].Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
			}
		}
	})
	return h
}

// add registers (or replaces) one tool.
func (s *Server) add(t tool) {
	t.ann.Title = t.title
	mt := mcp.NewToolWithRawSchema(t.name, t.description, t.run.schema)
	mt.Annotations = t.ann
	s.mcp.AddTool(mt, t.run.handler)
}

// ConnectorsChanged rebuilds the codemode tool's description after the
// runtime's connectors changed (Runtime.RefreshConnector); connected
// clients are sent notifications/tools/list_changed.
func (s *Server) ConnectorsChanged() { s.addCodemode() }

func (s *Server) register() {
	s.addCodemode()
	for _, t := range s.tools() {
		if !s.opts.WithholdApprovals || !approvalTools[t.name] {
			s.add(t)
		}
	}
}

// runtimeFailure maps an error from the runtime to a tool result: user
// errors (wrong state, unknown id) become isError outcomes naming the
// execution's status; internal failures are logged in detail and reported
// briefly.
func (s *Server) runtimeFailure(ctx context.Context, tool, executionID string, err error) *mcp.CallToolResult {
	if codemode.IsRefusal(err) {
		o := s.rt.RefusalOutcome(ctx, executionID, err)
		return valueResult(errorOutcome{Status: o.Status.String(), ExecutionID: o.ExecutionID, Error: o.Error + listHint(err)}, true)
	}
	if errors.Is(err, context.Canceled) {
		return valueResult(errorOutcome{Status: "error", ExecutionID: executionID, Error: "canceled"}, true)
	}
	s.log.Error("tool failed", "tool", tool, "executionId", executionID, "err", err)
	return valueResult(errorOutcome{Status: "error", ExecutionID: executionID, Error: internalError(err)}, true)
}

// internalError is what a client is told of an internal failure, which
// the server logs in detail: its first line, without file paths.
func internalError(err error) string {
	return "internal error: " + scrub.Paths(short.FirstLine(err.Error())) + " (details in the server log)"
}

// listHint tells the client which tool lists what a refused request named
// (the engine's messages name no surface), or "".
func listHint(err error) string {
	switch {
	case errors.Is(err, codemode.ErrUnknownExecution):
		return " (list them with codemode_executions)"
	case errors.Is(err, codemode.ErrUnknownSnippet):
		return " (list them with codemode_snippets)"
	}
	return ""
}

// Engine is what the server needs of the durable runtime; package runtime's
// *Runtime implements it. Its methods must be safe for concurrent use. An
// error that codemode.IsRefusal reports is a request the client can
// correct (shown as an outcome with the execution's status); any other
// error is an internal failure.
type Engine interface {
	// What the console needs too (Rollback, Pending, Executions,
	// ExecutionLog, Snippets, RejectReviewed, …): the server serves it.
	console.Engine

	// Execute runs a new program; ap (nil: none) is asked about calls that
	// need approval before the run pauses.
	Execute(ctx context.Context, code string, ap codemode.Approver) (codemode.Outcome, error)
	// Approve resumes a paused run with its pending actions approved.
	Approve(ctx context.Context, id string, ap codemode.Approver) (codemode.Outcome, error)
	// Reject ends a paused run rejected (seq > 0: that pending action).
	Reject(ctx context.Context, id string, seq int) (codemode.Outcome, error)

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
