package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/policy"
)

// access is what a request does to a run, for the policy: read or act on
// it whole (its starter's), or decide its pending actions (an approver's
// too).
type access int

const (
	ownRun access = iota + 1
	pendingOfRun
)

// visible returns nil when the person ctx carries may reach run e as a
// says, else ErrUnknownExecution: the policy never tells that another's
// run exists beyond what it shows. Without a principal every run is
// visible.
func (r *Runtime) visible(ctx context.Context, e *codemode.Execution, a access) error {
	who := codemode.PrincipalFrom(ctx)
	if r.opts.Policy.Sees(who, e) {
		return nil
	}
	if a == pendingOfRun && e.Status == codemode.StatusPaused {
		pending, err := r.pendingOf(ctx, e.ID)
		if err != nil {
			return err
		}
		if r.opts.Policy.SeesPending(who, e, pending) {
			return nil
		}
	}
	return unknownExecution(e.ID)
}

// shown is out as the person ctx carries may be told it: whole to the
// run's starter (and the one user); to an approver deciding another's run,
// its id and status and the pending actions the policy shows them, never
// the run's result, error, console output or rollback report.
func (r *Runtime) shown(ctx context.Context, e *codemode.Execution, out codemode.Outcome) codemode.Outcome {
	who := codemode.PrincipalFrom(ctx)
	if e == nil || r.opts.Policy.Sees(who, e) {
		return out
	}
	cut := codemode.Outcome{ExecutionID: out.ExecutionID, Status: out.Status}
	if out.Status == codemode.StatusError {
		cut.Error = fmt.Sprintf("execution %s ended in error; the person who started it sees why", out.ExecutionID)
	}
	for _, a := range out.Pending {
		if r.opts.Policy.Shown(who, e, a) {
			cut.Pending = append(cut.Pending, a)
		}
	}
	return cut
}

// seen loads run id for a request that reaches it as a says (visible). A
// refusal under an issuer is audited, for a hidden run as for a missing
// one (the same answer either way).
func (r *Runtime) seen(ctx context.Context, id string, a access) (*codemode.Execution, error) {
	return r.seenBy(ctx, id, a, r.getExecution)
}

// seenBy is seen, reading the run with get.
func (r *Runtime) seenBy(ctx context.Context, id string, a access, get func(context.Context, string) (*codemode.Execution, error)) (*codemode.Execution, error) {
	e, err := get(ctx, id)
	if err == nil {
		err = r.visible(ctx, e, a)
	}
	if err != nil {
		if codemode.PrincipalFrom(ctx) != nil {
			r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditView, ExecutionID: id}, err)
		}
		return nil, err
	}
	return e, nil
}

// audit appends rec, by the person ctx carries, with the outcome err gives
// it (ok, "refused: " and the reason, or error); an AuditView record is
// kept only for a run hidden from the person. A failure to write is
// logged: it must not undo a decision already made.
func (r *Runtime) audit(ctx context.Context, rec codemode.AuditRecord, err error) {
	switch {
	case err == nil && rec.Action == codemode.AuditView:
		return
	case err == nil:
		if rec.Outcome == "" {
			rec.Outcome = codemode.AuditOK
		}
	case codemode.IsRefusal(err):
		// (A refusal's message is the runtime's own; the reason a sign-in
		// is needed may quote a downstream server: bounded, scrubbed.)
		rec.Outcome = short.Clip(r.scrub.String(codemode.AuditRefused+": "+err.Error()), maxAuditOutcome)
	default:
		rec.Outcome = "error"
	}
	if rec.Action == codemode.AuditView && !errors.Is(err, codemode.ErrUnknownExecution) {
		return
	}
	rec.Person, rec.At, rec.Source = codemode.PersonFrom(ctx), r.now(), codemode.SourceFrom(ctx)
	// (The id, and a sign-in's connector, are the request's: one naming
	// nothing may be anything.)
	rec.ExecutionID, rec.Target = short.Clip(rec.ExecutionID, maxExecutionID), short.Clip(rec.Target, maxAuditOutcome)
	if werr := r.store.Audit(context.WithoutCancel(ctx), rec); werr != nil {
		r.log.Warn("could not write the audit", "action", rec.Action, "execution", rec.ExecutionID, "err", werr)
	}
}

// AuditSession records that the person ctx carries signed in to a
// surface (codemode.AuditLogin: the approval console) or logged out of it
// (AuditLogout); with refused (an error codemode.IsRefusal reports), that
// their sign-in was refused and why. Other actions are the runtime's own
// to record and are ignored here.
func (r *Runtime) AuditSession(ctx context.Context, action codemode.AuditAction, refused error) {
	if action != codemode.AuditLogin && action != codemode.AuditLogout {
		return
	}
	r.audit(ctx, codemode.AuditRecord{Action: action}, refused)
}

// Audit returns the audit records q selects, oldest first: for the
// command line on the server's machine (codemode-mcp audit), never for a
// request under an issuer, which gets ErrNotAllowed.
func (r *Runtime) Audit(ctx context.Context, q codemode.AuditQuery) ([]codemode.AuditRecord, error) {
	if codemode.PrincipalFrom(ctx) != nil {
		return nil, fmt.Errorf("the audit is read on the server's machine (codemode-mcp audit): %w", codemode.ErrNotAllowed)
	}
	return r.store.AuditRecords(ctx, q)
}

// targets names what pending actions are about: "connector.method",
// each once, in order.
func targets(pending []codemode.PendingAction) string {
	var out []string
	for _, a := range pending {
		if t := a.Connector + "." + a.Method; !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, ",")
}

// decided stamps en as decided now by the person ctx carries.
func (r *Runtime) decided(ctx context.Context, en *codemode.Entry) {
	en.DecidedBy, en.DecidedAt = codemode.PersonFrom(ctx), r.now()
}

// maxAuditOutcome bounds an audit record's outcome and target, in bytes.
const maxAuditOutcome = 1000

// defaultPolicy is the policy of a Runtime given none.
var defaultPolicy = &policy.Policy{}
