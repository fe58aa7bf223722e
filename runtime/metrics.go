package runtime

import (
	"context"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Metrics hears what the runtime measures (Options.Metrics): runs that
// end, the calls programs make, and the waits of paused runs. Its methods
// must be safe for concurrent use and must not block. A nil Metrics
// measures nothing, and costs a nil check where it would measure.
type Metrics interface {
	// RunEnded: a run reached final status after d since it started
	// (pauses included).
	RunEnded(ctx context.Context, status string, d time.Duration)
	// CallDone: a connector call the program made (not a replayed one)
	// took d and ended with outcome "ok" or "error" (its tool's failure,
	// or the transport's).
	CallDone(ctx context.Context, connector, method, outcome string, d time.Duration)
	// ApprovalDecided: a paused run waited for a person for waited
	// before decision ("approved", "rejected", "cancelled").
	ApprovalDecided(ctx context.Context, decision string, waited time.Duration)
}

// statusSet hears that run e moved from status from, which it had been
// in since since, to its status: this process's Awaits wake (r.changed
// closes), and Metrics hears of a paused run rejected or cancelled (a
// rollback rejects what was pending) and of a run that ended. An
// approval is reported once it is made (claimApproved): the claim that
// precedes it may still be given back.
func (r *Runtime) statusSet(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, since time.Time) {
	r.mu.Lock()
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	r.mu.Unlock()
	if r.opts.Metrics == nil {
		return
	}
	if from == codemode.StatusPaused && e.Status != codemode.StatusRunning {
		decision := e.Status.String()
		if e.Status == codemode.StatusRollingBack {
			decision = codemode.StatusRejected.String()
		}
		r.opts.Metrics.ApprovalDecided(ctx, decision, e.UpdatedAt.Sub(since))
	}
	if e.Status.Terminal() {
		r.opts.Metrics.RunEnded(ctx, e.Status.String(), e.UpdatedAt.Sub(e.CreatedAt))
	}
}
