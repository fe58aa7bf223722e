package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// approver returns the runtime approver for this request: one that asks the
// user through MCP elicitation when it is enabled and the client declared
// the capability, else nil (approval-required calls pause). Under an
// issuer it asks only a principal granted codemode:approve (without one,
// the one user).
func (s *Server) approver(ctx context.Context) codemode.Approver {
	if _, el := s.elicitation(ctx); el == nil || (s.opts.Auth != nil && !codemode.PrincipalFrom(ctx).HasScope(codemode.ScopeApprove)) {
		return nil
	}
	return elicitApprover{s: s}
}

// elicitation returns the request's session and the elicitation its
// client declared, when elicitation is enabled; else a nil capability.
func (s *Server) elicitation(ctx context.Context) (mcpserver.ClientSession, *mcp.ElicitationCapability) {
	sess, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	if !s.opts.Elicitation || !ok {
		return nil, nil
	}
	return sess, sess.GetClientCapabilities().Elicitation
}

type elicitApprover struct{ s *Server }

// noFields is the schema of what an elicitation asks the person to fill
// in: nothing, they only accept, decline or cancel.
var noFields = map[string]any{"type": "object", "properties": map[string]any{}}

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
	head := fmt.Sprintf("Approve %s (execution %s, call %d)?", shownMethod(p), p.ExecutionID, p.Seq)
	if utf8.RuneCountInString(args) <= maxShownArgs {
		return head + "\nArguments:\n" + args, true
	}
	sum := sha256.Sum256(p.Args)
	return fmt.Sprintf("%s\nThe arguments are too long to show here (%d bytes, sha256 %x). They begin:\n%s\n"+
		"Accepting here does not approve them: read them with `codemode-mcp executions show %s` and approve with `codemode-mcp approvals approve %s`, or decline to reject the call.",
		head, len(p.Args), sum[:8], truncate.String(args, shownHead), p.ExecutionID, p.ExecutionID), false
}

// shownMethod is p's connector.method as a prompt shows it, its hidden
// characters escaped: a connector that forwards unknown methods calls
// them by whatever name the program wrote.
func shownMethod(p codemode.PendingAction) string {
	return visible.Escape(p.Connector + "." + p.Method)
}

// Ask sends an elicitation naming connector, method and arguments; accept
// approves (unless the arguments were too long to show, when the run stays
// paused), decline and cancel reject, a failure to ask leaves the run
// paused.
func (a elicitApprover) Ask(ctx context.Context, p codemode.PendingAction) (codemode.Decision, error) {
	msg, whole := elicitMessage(p)
	res, err := a.s.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  mcp.ElicitationParams{Message: msg, RequestedSchema: noFields},
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

// maxSignIns bounds the sign-ins one tool call walks a run through (a
// program may need several connectors signed in to, one after another).
const maxSignIns = 4

// signInWait bounds how long a tool call waits for the person to finish
// a sign-in it asked them for.
const signInWait = 10 * time.Minute

// signInThenResume takes the outcome of a run and, while it is paused for
// nothing but a sign-in to a connector and the client can open a link for
// the person (URL-mode elicitation, with elicitation enabled), asks them
// to sign in, waits for the sign-in to complete, and resumes the run
// exactly as an approval does (Engine.Approve: the program runs again by
// replay; nothing runs twice). A person who declines, a sign-in that
// fails or takes too long, or a client that cannot open links leaves the
// run paused, awaiting the sign-in, as returned. The model sees outcomes
// only: never the link's code or any token.
//
// A run also waiting for an approval is returned as is: resuming it here
// would approve calls nobody was shown.
func (s *Server) signInThenResume(ctx context.Context, out codemode.Outcome, err error) (codemode.Outcome, error) {
	for range maxSignIns {
		if err != nil || out.Status != codemode.StatusPaused || len(out.Pending) == 0 {
			return out, err
		}
		connector := ""
		for _, p := range out.Pending {
			if p.Awaits != codemode.AwaitsSignIn || (connector != "" && p.Connector != connector) {
				return out, nil
			}
			connector = p.Connector
		}
		if !s.askSignIn(ctx, out.Pending[0]) {
			return out, nil
		}
		out, err = s.rt.Approve(ctx, out.ExecutionID, s.approver(ctx))
	}
	return out, err
}

// askSignIn starts a sign-in to p's connector, asks the person through the
// request's client to open its link, and reports whether they signed in
// within the wait: when elicitation is enabled and the client declared
// URL-mode elicitation. Failures are logged; the run then stays paused.
func (s *Server) askSignIn(ctx context.Context, p codemode.PendingAction) bool {
	sess, el := s.elicitation(ctx)
	if el == nil || el.URL == nil {
		return false
	}
	a, err := s.rt.BeginSignIn(ctx, p.Connector)
	if err != nil {
		s.log.Warn("could not start a sign-in; the run stays paused", "executionId", p.ExecutionID, "connector", p.Connector, "err", err)
		return false
	}
	defer a.Close()
	eid := rand.Text()
	msg := fmt.Sprintf("Sign in to %s: execution %s needs it for call %d (%s). Open the link to sign in; the run goes on once you have.",
		p.Connector, p.ExecutionID, p.Seq, shownMethod(p))
	res, err := s.mcp.RequestURLElicitation(ctx, sess, eid, a.URL(), msg)
	if err != nil {
		s.log.Info("URL elicitation unavailable; the run stays paused awaiting the sign-in", "executionId", p.ExecutionID, "err", err)
		return false
	}
	if res.Action != mcp.ElicitationResponseActionAccept {
		s.log.Info("the person did not open the sign-in link; the run stays paused", "executionId", p.ExecutionID, "connector", p.Connector, "action", res.Action)
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, signInWait)
	defer cancel()
	if err := a.Wait(wctx); err != nil {
		s.log.Warn("the sign-in did not complete; the run stays paused", "executionId", p.ExecutionID, "connector", p.Connector, "err", err)
		return false
	}
	if err := s.mcp.SendElicitationComplete(ctx, sess, eid); err != nil {
		s.log.Debug("could not tell the client the sign-in completed", "err", err)
	}
	return true
}
