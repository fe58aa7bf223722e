package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/invopop/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
)

// The tools the server offers (README "What the client sees"), one row
// each: what clients are told of it and what it does with the input its
// arguments decode into (handles). codemode's is addCodemode's: its
// description changes with the connectors.

// tool is one tool as register adds it.
type tool struct {
	name, title, description string
	ann                      mcp.ToolAnnotation
	run                      toolFunc
}

// toolFunc is a tool's input schema and its handler.
type toolFunc struct {
	schema  json.RawMessage
	handler mcpserver.ToolHandlerFunc
}

// readOnly are the hints of the tools that only read.
var readOnly = mcp.ToolAnnotation{ReadOnlyHint: new(true), OpenWorldHint: new(false)}

// approvalTools are the tools WithholdApprovals leaves out: the ones that
// decide a pending call or undo applied ones.
var approvalTools = map[string]bool{"codemode_approve": true, "codemode_reject": true, "codemode_rollback": true}

// addCodemode registers the codemode tool, whose description carries the
// connectors and their declarations as the runtime has them now.
func (s *Server) addCodemode() {
	budget := cmp.Or(s.opts.DescriptionBudget, config.DefaultDescriptionBudget)
	decls, fits := "", false
	if budget > 0 {
		decls, fits = s.rt.DeclarationsWithin(budget)
	}
	s.add(tool{name: "codemode", title: "Run a program against the connectors",
		description: Description(s.rt.Connectors(), decls, !fits),
		ann:         mcp.ToolAnnotation{ReadOnlyHint: new(false), DestructiveHint: new(false), OpenWorldHint: new(true)},
		run: handlesWith(s, codemodeArgs, func(ctx context.Context, in *codemodeInput) (codemode.Outcome, error) {
			out, err := s.rt.Execute(ctx, in.Code, s.approver(ctx))
			return s.signInThenResume(ctx, out, err)
		})})
}

// tools are the other tools, in the order they are registered.
func (s *Server) tools() []tool {
	return []tool{
		{name: "codemode_pending", title: "List actions awaiting approval",
			description: "List the connector calls awaiting a human's approval: of one execution, or of every paused execution.",
			ann:         readOnly,
			run: handles(s, func(ctx context.Context, in *pendingInput) (any, error) {
				p, err := s.rt.Pending(ctx, in.ExecutionID)
				if p == nil {
					p = []codemode.PendingAction{}
				}
				return map[string]any{"pending": s.visiblePending(p)}, err
			})},
		{name: "codemode_approve", title: "Approve a paused execution",
			description: "Approve the pending action(s) of a paused execution and resume it; returns its new outcome. Only call this when the user approved the action.",
			ann:         mcp.ToolAnnotation{ReadOnlyHint: new(false), DestructiveHint: new(true), OpenWorldHint: new(true)},
			run: handles(s, func(ctx context.Context, in *executionInput) (codemode.Outcome, error) {
				out, err := s.rt.Approve(ctx, in.ExecutionID, s.approver(ctx))
				return s.signInThenResume(ctx, out, err)
			})},
		{name: "codemode_reject", title: "Reject a paused execution",
			description: "Reject the pending action(s) of a paused execution; the run ends rejected (actions already applied stay applied).",
			ann:         mcp.ToolAnnotation{ReadOnlyHint: new(false), DestructiveHint: new(false), IdempotentHint: new(true), OpenWorldHint: new(false)},
			run: handles(s, func(ctx context.Context, in *rejectInput) (codemode.Outcome, error) {
				return s.rt.Reject(ctx, in.ExecutionID, in.Seq)
			})},
		{name: "codemode_rollback", title: "Roll back an execution",
			description: "Revert the applied, revertible actions of an execution, newest first; every revert is attempted and failures are reported.",
			ann:         mcp.ToolAnnotation{ReadOnlyHint: new(false), DestructiveHint: new(true), OpenWorldHint: new(true)},
			run: handles(s, func(ctx context.Context, in *executionInput) (codemode.Outcome, error) {
				return s.rt.Rollback(ctx, in.ExecutionID)
			})},
		{name: "codemode_executions", title: "List executions",
			description: "The audit trail: executions newest first, each with its calls and their states (long runs list their first calls and count the rest in moreCalls). The full trail of a run: codemode-mcp executions show ID.",
			ann:         readOnly, run: handles(s, s.executions)},
		{name: "codemode_snippets", title: "List saved snippets",
			description: "List saved snippets (run them with codemode.run(name, input) inside a program).",
			ann:         readOnly,
			run: handles(s, func(ctx context.Context, _ *snippetsInput) (any, error) {
				sn, err := s.rt.Snippets(ctx)
				if sn == nil {
					sn = []codemode.Snippet{}
				}
				return map[string]any{"snippets": sn}, err
			})},
		{name: "codemode_save_snippet", title: "Save a snippet",
			description: "Save the program of a completed execution as a named snippet, runnable with codemode.run(name, input).",
			ann:         mcp.ToolAnnotation{ReadOnlyHint: new(false), DestructiveHint: new(false), OpenWorldHint: new(false)},
			run: handles(s, func(ctx context.Context, in *saveSnippetInput) (any, error) {
				sn, err := s.rt.SaveSnippet(ctx, in.Name, in.ExecutionID, in.Description, in.InputSchema)
				return map[string]any{"snippet": sn}, err
			})},
	}
}

// handles makes a tool's schema and handler: its arguments decoded into
// an In (toolArgs.decode), and its answer what do returns — a run's
// outcome (the client hears of the run as it goes: observe), or any other
// value — or the runtime's failure about the execution (the run's, else
// the one the arguments name).
func handles[In, Out any](s *Server, do func(context.Context, *In) (Out, error)) toolFunc {
	return handlesWith(s, newToolArgs[In](), do)
}

// handlesWith is handles with the arguments' schema compiled already:
// the codemode tool's (codemodeArgs), registered again whenever the
// connectors change.
func handlesWith[In, Out any](s *Server, args toolArgs[In], do func(context.Context, *In) (Out, error)) toolFunc {
	return toolFunc{schema: args.schema, handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, _ := json.Marshal(req.GetRawArguments()) // (they came as JSON)
		in, err := args.decode(req.Params.Name, raw)
		if err != nil { // a tool error the model can fix, naming what was wrong
			return valueResult(errorOutcome{Status: "error", Error: err.Error()}, true), nil
		}
		ctx, sent := s.observe(s.traced(ctx, req.Params.Meta), req)
		defer sent()
		v, err := do(ctx, in)
		o, isOutcome := any(v).(codemode.Outcome)
		switch {
		case err != nil:
			return s.runtimeFailure(ctx, req.Params.Name, cmp.Or(o.ExecutionID, req.GetString("executionId", "")), err), nil
		case isOutcome:
			return s.outcomeResult(o), nil
		}
		return valueResult(v, false), nil
	}}
}

type codemodeInput struct {
	Code string `json:"code" jsonschema:"required,minLength=1,description=The program: an async arrow function (preferred)\\, a statement list whose last expression is the result\\, a named function or export default; JavaScript or TypeScript; may be inside a markdown code fence."`
}

// check refuses a program of white space only (the schema's minLength
// lets it through), on a plain call and a task alike.
func (in *codemodeInput) check() error {
	if strings.TrimSpace(in.Code) == "" {
		return errors.New(`"code" is required: pass the program as {"code": "async () => { … }"}`)
	}
	return nil
}

type pendingInput struct {
	ExecutionID string `json:"executionId,omitempty" jsonschema:"description=Only this execution's pending actions; all paused executions when omitted."`
}

type executionInput struct {
	ExecutionID string `json:"executionId" jsonschema:"required,minLength=1,description=The execution id (exec_…) from a paused outcome."`
}

type rejectInput struct {
	ExecutionID string `json:"executionId" jsonschema:"required,minLength=1,description=The execution id (exec_…) from a paused outcome."`
	Seq         int    `json:"seq,omitempty" jsonschema:"minimum=1,description=The pending action to reject; every pending action when omitted. The run ends rejected either way."`
}

type executionsInput struct {
	Limit  int                 `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,description=How many executions to list (default 20)\\, newest first."`
	Status string              `json:"status,omitempty" jsonschema:"description=Only executions in this status."`
	status codemode.ExecStatus // Status, parsed by check (zero: any)
}

func (in *executionsInput) check() (err error) {
	if in.Status != "" {
		in.status, err = codemode.ParseExecStatus(in.Status)
	}
	return err
}

// JSONSchemaExtend lists every execution status (codemode.ExecStatuses)
// as the values of status (the reflector calls it).
func (executionsInput) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("status"); ok {
		p.Enum = nil
		for _, st := range codemode.ExecStatuses() {
			p.Enum = append(p.Enum, st.String())
		}
	}
}

type snippetsInput struct{}

type saveSnippetInput struct {
	Name        string          `json:"name" jsonschema:"required,pattern=^[A-Za-z_][A-Za-z0-9_-]*$,description=The snippet's name for codemode.run(name\\, input)."`
	ExecutionID string          `json:"executionId" jsonschema:"required,minLength=1,description=A completed execution whose program becomes the snippet."`
	Description string          `json:"description,omitempty" jsonschema:"description=What the snippet does (found by codemode.search)."`
	InputSchema json.RawMessage `json:"inputSchema,omitempty" jsonschema:"type=object,description=Optional JSON Schema of the snippet's input."`
}
