package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// errNoSignIn is the error of the SignIner methods of a connector that
// does not sign in (a stdio server, or a url server without OAuth), whose
// Capabilities have no SignIner.
var errNoSignIn = errors.New("this connector does not sign in (only a url connector does)")

// needsSignIn reports whether err says a person must sign in.
func needsSignIn(err error) bool {
	_, ok := connectors.AsSignInRequired(err)
	return ok
}

// NeedsSignIn implements connectors.SignIner. It reads the token store,
// where another process may have stored tokens meanwhile; when it holds
// usable tokens and the connector has no session for want of them, the
// connector connects again now (a request to the MCP server, none to its
// authorization server unless a token is due) and reports what the
// server says.
func (c *Connector) NeedsSignIn(ctx context.Context) (*connectors.SignInRequired, error) {
	if c.cfg.OAuth == nil {
		return nil, nil
	}
	sr, err := c.cfg.OAuth.NeedsSignIn(ctx)
	if err != nil || sr != nil {
		return sr, err
	}
	c.mu.RLock()
	down := c.down
	c.mu.RUnlock()
	if down == nil || !needsSignIn(down) { // else it has no session for want of them
		return nil, nil
	}
	if _, err := c.reconnect(ctx); err != nil {
		if sr, ok := connectors.AsSignInRequired(err); ok {
			return sr, nil
		}
		return nil, err
	}
	return nil, nil
}

// BeginSignIn implements connectors.SignIner: the attempt's Wait returns
// once the tokens are stored and the connector is connected again (its
// tools listed, OnToolsChanged called when they changed).
func (c *Connector) BeginSignIn(ctx context.Context) (connectors.SignInAttempt, error) {
	if c.cfg.OAuth == nil {
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, errNoSignIn)
	}
	a, err := c.cfg.OAuth.BeginSignIn(ctx)
	if err != nil {
		return nil, err
	}
	return &signInAttempt{Attempt: a, c: c}, nil
}

// SignOut implements connectors.SignIner: it forgets (and revokes) the
// stored tokens; the next call needs a sign-in.
func (c *Connector) SignOut(ctx context.Context) error {
	if c.cfg.OAuth == nil {
		return fmt.Errorf("mcp connector %q: %w", c.cfg.Name, errNoSignIn)
	}
	return c.cfg.OAuth.SignOut(ctx)
}

// signInAttempt is a sign-in that ends with the connector connected again.
type signInAttempt struct {
	*oauth.Attempt
	c *Connector
}

// Wait waits for the tokens, then connects again when the connector has no
// live session (reconnect keeps one: a session that lived on through a
// refused token uses the new tokens on its next request; a connector down
// for a sign-in has none).
func (a *signInAttempt) Wait(ctx context.Context) error {
	if err := a.Attempt.Wait(ctx); err != nil {
		return err
	}
	if _, err := a.c.reconnect(ctx); err != nil && !needsSignIn(err) {
		return fmt.Errorf("signed in, but connecting again failed: %w", err)
	}
	// Signed in. (A server that wants more, say other scopes, makes the
	// next call need a sign-in again.)
	return nil
}
