package runtime

import (
	"context"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// ErrNoSignIn is returned (wrapped) by BeginSignIn for a connector that
// has no sign-in (its source is not a connectors.SignIner).
var ErrNoSignIn = errors.New("connector has no sign-in")

// BeginSignIn starts a person's sign-in to connector name (see
// connectors.SignIner). The attempt's Wait returns once the tokens are
// stored and the connector's tools are listed again, so that an approval
// made next finds them (Approve of a run awaiting the sign-in). The
// caller must Close the attempt.
func (r *Runtime) BeginSignIn(ctx context.Context, name string) (connectors.SignInAttempt, error) {
	s := r.catalog().byName[name]
	if s == nil {
		return nil, fmt.Errorf("sign in: unknown connector %q", name)
	}
	si, ok := s.src.Connector.(connectors.SignIner)
	if !ok {
		return nil, fmt.Errorf("sign in to %s: %w", name, ErrNoSignIn)
	}
	a, err := si.BeginSignIn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: %w", name, err)
	}
	return &signInAttempt{SignInAttempt: a, r: r, name: name}, nil
}

// signInAttempt is a connector's attempt whose Wait also lists the
// connector's tools again.
type signInAttempt struct {
	connectors.SignInAttempt
	r    *Runtime
	name string
}

func (a *signInAttempt) Wait(ctx context.Context) error {
	if err := a.SignInAttempt.Wait(ctx); err != nil {
		return err
	}
	if _, err := a.r.RefreshConnector(ctx, a.name); err != nil {
		return fmt.Errorf("signed in to %s, but its tools could not be listed: %w", a.name, err)
	}
	return nil
}

// SignOut forgets the tokens of connector name (connectors.SignIner): its
// next call awaits a new sign-in.
func (r *Runtime) SignOut(ctx context.Context, name string) error {
	s := r.catalog().byName[name]
	if s == nil {
		return fmt.Errorf("sign out: unknown connector %q", name)
	}
	si, ok := s.src.Connector.(connectors.SignIner)
	if !ok {
		return fmt.Errorf("sign out of %s: %w", name, ErrNoSignIn)
	}
	return si.SignOut(ctx)
}

// AwaitingSignIn returns the ids of the paused runs that await a sign-in to
// connector name, oldest first.
func (r *Runtime) AwaitingSignIn(ctx context.Context, name string) ([]string, error) {
	pending, err := r.Pending(ctx, "")
	if err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, p := range pending { // oldest run first
		if p.Awaits == codemode.AwaitsSignIn && p.Connector == name && !seen[p.ExecutionID] {
			seen[p.ExecutionID] = true
			ids = append(ids, p.ExecutionID)
		}
	}
	return ids, nil
}
