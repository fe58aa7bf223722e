package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// maxSignIns bounds the sign-ins one tool call walks a run through (a
// program may need several connectors signed in to, one after another).
const maxSignIns = 4

// DefaultSignInWait bounds how long a tool call waits for the person to
// finish a sign-in it asked them for (Options.SignInWait).
const DefaultSignInWait = 10 * time.Minute

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
		sess := s.urlElicitationSession(ctx)
		if sess == nil || !s.askSignIn(ctx, sess, out.Pending[0]) {
			return out, nil
		}
		out, err = s.rt.Approve(ctx, out.ExecutionID, s.approver(ctx))
	}
	return out, err
}

// urlElicitationSession returns the request's session when elicitation is
// enabled and its client declared URL-mode elicitation, else nil.
func (s *Server) urlElicitationSession(ctx context.Context) mcpserver.ClientSession {
	if !s.opts.Elicitation {
		return nil
	}
	sess, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	if !ok {
		return nil
	}
	if el := sess.GetClientCapabilities().Elicitation; el == nil || el.URL == nil {
		return nil
	}
	return sess
}

// askSignIn starts a sign-in to p's connector, asks the person through the
// client to open its link, and reports whether they signed in within the
// wait. Failures are logged; the run then stays paused.
func (s *Server) askSignIn(ctx context.Context, sess mcpserver.ClientSession, p codemode.PendingAction) bool {
	a, err := s.rt.BeginSignIn(ctx, p.Connector)
	if err != nil {
		s.log.Warn("could not start a sign-in; the run stays paused", "executionId", p.ExecutionID, "connector", p.Connector, "err", err)
		return false
	}
	defer a.Close()
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	eid := hex.EncodeToString(id)
	msg := fmt.Sprintf("Sign in to %s: execution %s needs it for call %d (%s.%s). Open the link to sign in; the run goes on once you have.",
		p.Connector, p.ExecutionID, p.Seq, p.Connector, p.Method)
	res, err := s.mcp.RequestURLElicitation(ctx, sess, eid, a.URL(), msg)
	if err != nil {
		s.log.Info("URL elicitation unavailable; the run stays paused awaiting the sign-in", "executionId", p.ExecutionID, "err", err)
		return false
	}
	if res.Action != mcp.ElicitationResponseActionAccept {
		s.log.Info("the person did not open the sign-in link; the run stays paused", "executionId", p.ExecutionID, "connector", p.Connector, "action", res.Action)
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, s.signInWait())
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

func (s *Server) signInWait() time.Duration {
	if s.opts.SignInWait > 0 {
		return s.opts.SignInWait
	}
	return DefaultSignInWait
}
