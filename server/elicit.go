package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// approver returns the runtime approver for this request: one that asks the
// user through MCP elicitation when it is enabled and the client declared
// the capability, else nil (approval-required calls pause).
func (s *Server) approver(ctx context.Context) codemode.Approver {
	if !s.opts.Elicitation || !s.principalCanApprove(ctx) {
		return nil
	}
	sess, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	if !ok || sess.GetClientCapabilities().Elicitation == nil {
		return nil
	}
	return elicitApprover{s: s}
}

type elicitApprover struct{ s *Server }

// maxShownArgs is the most characters of (indented) arguments a prompt
// shows; longer arguments cannot be approved through elicitation.
const maxShownArgs = 4000

// shownHead is how much of arguments too long to show whole a prompt
// shows, to help the user recognise them.
const shownHead = 600

// elicitMessage is the prompt for p: the connector, method and arguments
// with every hidden character escaped (package visible), so what
// the user reads is what runs. Arguments longer than maxShownArgs are
// shown cut, with their size and a hash, and whole is false: such a call
// is approved only where the user can read all of it.
func elicitMessage(p codemode.PendingAction) (msg string, whole bool) {
	args := string(p.Args)
	var b bytes.Buffer
	if json.Indent(&b, p.Args, "", "  ") == nil { // the text as logged, laid out: numbers and keys exactly as they run
		args = b.String()
	}
	args = visible.Escape(args)
	head := fmt.Sprintf("Approve %s.%s (execution %s, call %d)?", p.Connector, p.Method, p.ExecutionID, p.Seq)
	if utf8.RuneCountInString(args) <= maxShownArgs {
		return head + "\nArguments:\n" + args, true
	}
	sum := sha256.Sum256(p.Args)
	return fmt.Sprintf("%s\nThe arguments are too long to show here (%d bytes, sha256 %x). They begin:\n%s\n"+
		"Accepting here does not approve them: read them with `codemode-mcp executions show %s` and approve with `codemode-mcp approvals approve %s`, or decline to reject the call.",
		head, len(p.Args), sum[:8], truncate.String(args, shownHead), p.ExecutionID, p.ExecutionID), false
}

// Ask sends an elicitation naming connector, method and arguments; accept
// approves (unless the arguments were too long to show, when the run stays
// paused), decline and cancel reject, a failure to ask leaves the run
// paused.
func (a elicitApprover) Ask(ctx context.Context, p codemode.PendingAction) (codemode.Decision, error) {
	msg, whole := elicitMessage(p)
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
		if !whole {
			a.s.log.Info("accepted through elicitation, but the arguments were too long to show; the run stays paused", "executionId", p.ExecutionID)
			return codemode.NoAnswer, nil
		}
		return codemode.Accept, nil
	case mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		return codemode.Decline, nil
	}
	return codemode.NoAnswer, nil
}
