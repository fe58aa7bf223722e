package server

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func (s *Server) handleCodemode(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, sent := s.observe(ctx, req)
	defer sent()
	var in codemodeInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	if strings.TrimSpace(in.Code) == "" {
		return valueResult(errorOutcome{Status: "error", Error: `"code" is required: pass the program as {"code": "async () => { … }"}`}, true), nil
	}
	out, err := s.rt.Execute(ctx, in.Code, s.approver(ctx))
	out, err = s.signInThenResume(ctx, out, err)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode", out.ExecutionID, err), nil
	}
	return s.outcomeResult(out), nil
}

func (s *Server) handlePending(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in pendingInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	p, err := s.rt.Pending(ctx, in.ExecutionID)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_pending", in.ExecutionID, err), nil
	}
	if p == nil {
		p = []codemode.PendingAction{}
	}
	return valueResult(map[string]any{"pending": s.visiblePending(p)}, false), nil
}

func (s *Server) handleApprove(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, sent := s.observe(ctx, req)
	defer sent()
	var in executionInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	out, err := s.rt.Approve(ctx, in.ExecutionID, s.approver(ctx))
	out, err = s.signInThenResume(ctx, out, err)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_approve", in.ExecutionID, err), nil
	}
	return s.outcomeResult(out), nil
}

func (s *Server) handleReject(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, sent := s.observe(ctx, req)
	defer sent()
	var in rejectInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	out, err := s.rt.Reject(ctx, in.ExecutionID, in.Seq)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_reject", in.ExecutionID, err), nil
	}
	return s.outcomeResult(out), nil
}

func (s *Server) handleRollback(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, sent := s.observe(ctx, req)
	defer sent()
	var in executionInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	out, err := s.rt.Rollback(ctx, in.ExecutionID)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_rollback", in.ExecutionID, err), nil
	}
	return s.outcomeResult(out), nil
}

func (s *Server) handleSnippets(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sn, err := s.rt.Snippets(ctx)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_snippets", "", err), nil
	}
	if sn == nil {
		sn = []codemode.Snippet{}
	}
	return valueResult(map[string]any{"snippets": sn}, false), nil
}

func (s *Server) handleSaveSnippet(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in saveSnippetInput
	if err := decode(req, &in); err != nil {
		return badArguments(err), nil
	}
	sn, err := s.rt.SaveSnippet(ctx, in.Name, in.ExecutionID, in.Description, in.InputSchema)
	if err != nil {
		return s.runtimeFailure(ctx, "codemode_save_snippet", in.ExecutionID, err), nil
	}
	return valueResult(map[string]any{"snippet": sn}, false), nil
}
