package connectors

import (
	"context"
	"errors"
	"fmt"
)

// SignInRequired is the error (wrapped) a connector returns from Tools or
// Call when its source needs a person to sign in before it answers: a
// remote MCP server that answered 401 to a request made without a token,
// with a token it no longer accepts (revoked, or its refresh refused), or
// 403 insufficient_scope when the scopes it asked for need a new consent.
// Nothing was sent that could have taken effect: the call can be made
// again once the person has signed in. The runtime pauses the run on it,
// like a call awaiting approval.
//
// Its text never holds a token, a code or a secret.
type SignInRequired struct {
	// Connector is the connector's name.
	Connector string
	// Reason says why, for a person: "not signed in yet", "the server
	// refused the stored token", "the server needs the scopes a b".
	Reason string
}

func (e *SignInRequired) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("connector %s needs a sign-in", e.Connector)
	}
	return fmt.Sprintf("connector %s needs a sign-in: %s", e.Connector, e.Reason)
}

// AsSignInRequired returns the SignInRequired err wraps, if any.
func AsSignInRequired(err error) (*SignInRequired, bool) {
	var s *SignInRequired
	if errors.As(err, &s) {
		return s, true
	}
	return nil, false
}

// SignIner is the capability (Capabilities.SignIner) of connectors whose
// source may need a person to sign in (a remote MCP server behind OAuth).
// Its methods must be safe for concurrent use.
type SignIner interface {
	// NeedsSignIn reports whether a call would now fail with
	// SignInRequired (nil when it would not): no tokens are stored, or
	// those stored were refused. It may read the token store (another
	// process may have signed in meanwhile) but makes no request to the
	// server's authorization server.
	NeedsSignIn(ctx context.Context) (*SignInRequired, error)
	// BeginSignIn starts a sign-in: the authorization code flow with PKCE
	// through a loopback redirect listener of this process. The attempt's
	// URL is the page to open in the person's browser; Wait returns once
	// the tokens are stored (and the connector reconnected), or with the
	// reason the sign-in failed.
	BeginSignIn(ctx context.Context) (SignInAttempt, error)
	// SignOut forgets the stored tokens (and revokes them where the
	// authorization server offers revocation), so the next call needs a
	// new sign-in.
	SignOut(ctx context.Context) error
}

// SignInAttempt is one sign-in under way. Close stops it (the loopback
// listener closes) and is safe to call more than once and after Wait
// returned; every attempt must be closed.
type SignInAttempt interface {
	// URL is the authorization request to open in a browser. It holds the
	// PKCE challenge and state, never the verifier or a secret.
	URL() string
	// Wait blocks until the sign-in completed (nil: tokens stored), failed,
	// or ctx ended.
	Wait(ctx context.Context) error
	Close() error
}
