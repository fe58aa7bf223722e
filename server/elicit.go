package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
)

// approver returns the runtime approver for this request: one that asks the
// user through MCP elicitation when it is enabled and the client declared
// the capability, else nil (approval-required calls pause).
func (s *Server) approver(ctx context.Context) codemode.Approver {
	if !s.opts.Elicitation {
		return nil
	}
	sess, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	if !ok || sess.GetClientCapabilities().Elicitation == nil {
		return nil
	}
	return elicitApprover{s: s}
}

type elicitApprover struct{ s *Server }

// Ask sends an elicitation naming connector, method and arguments; accept
// approves, decline and cancel reject, a failure to ask leaves the run
// paused.
func (a elicitApprover) Ask(ctx context.Context, p codemode.PendingAction) (codemode.Decision, error) {
	args := truncate.String(string(p.Args), 2000) // whole runes, with a marker
	var pretty any
	if json.Unmarshal(p.Args, &pretty) == nil {
		if b, err := json.MarshalIndent(pretty, "", "  "); err == nil && len(b) <= 2000 {
			args = string(b)
		}
	}
	msg := fmt.Sprintf("Approve %s.%s (execution %s, call %d)?\nArguments:\n%s", p.Connector, p.Method, p.ExecutionID, p.Seq, args)
	res, err := a.s.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Message: msg,
			RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{},
			},
		},
	})
	if err != nil {
		a.s.log.Info("elicitation unavailable; the run stays paused", "executionId", p.ExecutionID, "err", err)
		return codemode.NoAnswer, nil
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		return codemode.Accept, nil
	case mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		return codemode.Decline, nil
	}
	return codemode.NoAnswer, nil
}
