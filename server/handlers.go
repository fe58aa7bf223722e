package server

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
)

// auditValueChars bounds the code, and the result with the logs, of each
// execution listed by codemode_executions.
const auditValueChars = 2000

func (s *Server) handleCodemode(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in codemodeInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Code) == "" {
		return valueResult(errorOutcome{Status: "error", Error: `"code" is required: pass the program as {"code": "async () => { … }"}`}, true), nil
	}
	out, err := s.rt.Execute(ctx, in.Code, s.approver(ctx))
	if err != nil {
		return s.runtimeFailure(ctx, "codemode", out.ExecutionID, err), nil
	}
	return outcomeResult(out), nil
}

func (s *Server) handlePending(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in pendingInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	p, err := s.rt.Pending(ctx, in.ExecutionID)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_pending", in.ExecutionID, err), nil
	}
	if p == nil {
		p = []rt.PendingAction{}
	}
	return valueResult(map[string]any{"pending": p}, false), nil
}

func (s *Server) handleApprove(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in executionInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	out, err := s.rt.Approve(ctx, in.ExecutionID, s.approver(ctx))
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_approve", in.ExecutionID, err), nil
	}
	return outcomeResult(out), nil
}

func (s *Server) handleReject(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in rejectInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	out, err := s.rt.Reject(ctx, in.ExecutionID, in.Seq)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_reject", in.ExecutionID, err), nil
	}
	return outcomeResult(out), nil
}

func (s *Server) handleRollback(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in executionInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	out, err := s.rt.Rollback(ctx, in.ExecutionID)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_rollback", in.ExecutionID, err), nil
	}
	return outcomeResult(out), nil
}

// executionView is one execution in the audit trail.
type executionView struct {
	*rt.Execution
	Calls []callView `json:"calls"`
}

// callView is one logged call of an execution, as the audit trail shows it.
type callView struct {
	Seq       int    `json:"seq"`
	Kind      string `json:"kind"`
	Connector string `json:"connector"`
	Method    string `json:"method"`
	Name      string `json:"name,omitempty"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
}

func (s *Server) handleExecutions(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in executionsInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	f := rt.ExecutionFilter{Limit: in.Limit}
	if f.Limit <= 0 {
		f.Limit = 20
	}
	if in.Status != "" {
		st, err := rt.ParseExecStatus(in.Status)
		if err != nil {
			return valueResult(errorOutcome{Status: "error", Error: err.Error()}, true), nil
		}
		f.Status = st
	}
	execs, err := s.rt.Executions(ctx, f)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_executions", "", err), nil
	}
	views := make([]executionView, 0, len(execs))
	for _, e := range execs {
		_, entries, err := s.rt.Execution(ctx, e.ID)
		if err != nil {
			return s.runtimeFailure(ctx, "codemode_executions", e.ID, err), nil
		}
		// The audit trail shows each run briefly; its full values stay in
		// the store (codemode-mcp executions show ID).
		e.Result, e.Logs = truncate.Fit(e.Result, e.Logs, auditValueChars)
		e.Code = truncate.String(e.Code, auditValueChars)
		views = append(views, executionView{Execution: e, Calls: callViews(entries)})
	}
	return valueResult(map[string]any{"executions": views}, false), nil
}

func callViews(entries []rt.Entry) []callView {
	out := make([]callView, 0, len(entries))
	for _, en := range entries {
		out = append(out, callView{Seq: en.Seq, Kind: en.Kind.String(), Connector: en.Connector, Method: en.Method,
			Name: en.Name, State: en.State.String(), Error: en.Error})
	}
	return out
}

func (s *Server) handleSnippets(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sn, err := s.rt.Snippets(ctx)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_snippets", "", err), nil
	}
	if sn == nil {
		sn = []rt.Snippet{}
	}
	return valueResult(map[string]any{"snippets": sn}, false), nil
}

func (s *Server) handleSaveSnippet(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in saveSnippetInput
	if err := decode(req, &in); err != nil {
		return nil, err
	}
	sn, err := s.rt.SaveSnippet(ctx, in.Name, in.ExecutionID, in.Description, in.InputSchema)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_save_snippet", in.ExecutionID, err), nil
	}
	return valueResult(map[string]any{"snippet": sn}, false), nil
}
