// Package policy is who may see and decide what on a server shared by a
// team (server.auth.issuer): the one place the rules are written, read by
// the engine (package runtime) with the principal of each request. With
// no principal (stdio, the static bearer token, the command line) every
// check passes: there is one user.
//
// The rules:
//   - a person sees, cancels and rolls back the runs they started, and no
//     other: another's run is not found (never "forbidden"), so that a
//     run's existence is not told to whom the policy does not show it;
//   - an approver of a connector (approvals.approvers, or the connector's
//     own approvers, which replace them) holding codemode:approve sees
//     every pending action of that connector, with its run's id and
//     starter (not the run's log or result), and decides it; with no
//     approvers configured, everyone holding codemode:approve is one;
//   - approving a run needs being an approver of every action it has
//     pending, and, with Separation, not having started it;
//   - rejecting a run is allowed to its starter (as cancelling is) and to
//     an approver of every action it has pending.
package policy

import (
	"fmt"
	"slices"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Approvers says who approves: a principal whose subject is listed, or
// whose groups or roles claim holds a listed value. The zero value lists
// nobody, which for Policy means "everyone holding codemode:approve".
// The cfg tags are its keys in the configuration (package config).
type Approvers struct {
	Subjects []string `cfg:"subjects,nonempty"`
	Groups   []string `cfg:"groups,nonempty"`
	Roles    []string `cfg:"roles,nonempty"`
}

// IsZero reports whether a lists nobody.
func (a Approvers) IsZero() bool {
	return len(a.Subjects) == 0 && len(a.Groups) == 0 && len(a.Roles) == 0
}

func (a Approvers) match(who *codemode.Principal) bool {
	return slices.Contains(a.Subjects, who.Subject) ||
		slices.ContainsFunc(who.Groups, func(g string) bool { return slices.Contains(a.Groups, g) }) ||
		slices.ContainsFunc(who.Roles, func(r string) bool { return slices.Contains(a.Roles, r) })
}

// A Policy is the configured rules (approvals.approvers,
// connectors.<name>.approvers, approvals.separation). Its zero value is
// the default: own runs only, everyone with codemode:approve approves,
// one's own runs included. It is read-only once made.
type Policy struct {
	// Approvers approve every connector without approvers of its own.
	Approvers Approvers
	// Connectors are connectors' own approvers, by connector name.
	Connectors map[string]Approvers
	// Separation forbids approving a run one started.
	Separation bool
}

// Sees reports whether who may see run e whole (its log and result),
// cancel it and roll it back: their own runs. A nil who is the one user.
func (p *Policy) Sees(who *codemode.Principal, e *codemode.Execution) bool {
	return who == nil || e.StartedBy.Subject == who.Subject
}

// Approver reports whether who may decide the pending actions of
// connector.
func (p *Policy) Approver(who *codemode.Principal, connector string) bool {
	if who == nil {
		return true
	}
	if !who.HasScope(codemode.ScopeApprove) {
		return false
	}
	rule, ok := p.Connectors[connector]
	if !ok {
		rule = p.Approvers
	}
	return rule.IsZero() || rule.match(who)
}

// Shown reports whether who is shown pending action a of run e: an
// action of their own run, or one they approve.
func (p *Policy) Shown(who *codemode.Principal, e *codemode.Execution, a codemode.PendingAction) bool {
	return p.Sees(who, e) || p.Approver(who, a.Connector)
}

// SeesPending reports whether who may see some of run e's pending
// actions (and so that the run exists, with its status and starter).
func (p *Policy) SeesPending(who *codemode.Principal, e *codemode.Execution, pending []codemode.PendingAction) bool {
	return slices.ContainsFunc(pending, func(a codemode.PendingAction) bool { return p.Shown(who, e, a) })
}

// MayApprove returns nil when who may approve run e with its pending
// actions, else an error wrapping codemode.ErrNotAllowed that says why.
//
// An action awaiting a sign-in is resumed, not approved: its run's
// starter may resume it (having signed in, perhaps to their own
// credentials: connectors with credentials: per_user) without being an
// approver and under approvals.separation, since resuming it approves no
// side effect: a call whose method needs approval then waits for one
// (runtime's afterSignIn).
func (p *Policy) MayApprove(who *codemode.Principal, e *codemode.Execution, pending []codemode.PendingAction) error {
	if who == nil {
		return nil
	}
	var approvals []codemode.PendingAction
	for _, a := range pending {
		if a.Awaits != codemode.AwaitsSignIn || !p.Sees(who, e) {
			approvals = append(approvals, a)
		}
	}
	if len(approvals) == 0 {
		return nil
	}
	if p.Separation && e.StartedBy.Subject == who.Subject {
		return &refusal{fmt.Sprintf("%s started this run; approvals.separation forbids approving one's own run", who.Display())}
	}
	return p.approverOfAll(who, approvals)
}

// MayReject returns nil when who may reject run e: its starter, or an
// approver of every action it has pending.
func (p *Policy) MayReject(who *codemode.Principal, e *codemode.Execution, pending []codemode.PendingAction) error {
	if p.Sees(who, e) {
		return nil
	}
	return p.approverOfAll(who, pending)
}

func (p *Policy) approverOfAll(who *codemode.Principal, pending []codemode.PendingAction) error {
	var not []string
	for _, a := range pending {
		if !p.Approver(who, a.Connector) && !slices.Contains(not, a.Connector) {
			not = append(not, a.Connector)
		}
	}
	switch {
	case len(not) == 0:
		return nil
	case !who.HasScope(codemode.ScopeApprove):
		return &refusal{fmt.Sprintf("%s is not an approver: the token lacks the scope %s", who.Display(), codemode.ScopeApprove)}
	case len(not) == 1:
		return &refusal{fmt.Sprintf("%s is not an approver of connector %s", who.Display(), not[0])}
	}
	return &refusal{fmt.Sprintf("%s is not an approver of connectors %s", who.Display(), strings.Join(not, ", "))}
}

// A refusal is the policy's answer to a decision it does not allow.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return codemode.ErrNotAllowed }
