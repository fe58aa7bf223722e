package runtime

import (
	"context"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// userError carries a full, user-facing message and unwraps to a sentinel.
type userError struct {
	sentinel error
	msg      string
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.sentinel }

// refusal is a refused request: its message, unwrapping to sentinel.
func refusal(sentinel error, format string, args ...any) error {
	return &userError{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

func wrongState(format string, args ...any) error {
	return refusal(codemode.ErrWrongState, format, args...)
}

// inState says in words that an execution is in status s, to follow its
// name in a message: "execution X ended in an error", not "is error".
func inState(s codemode.ExecStatus) string {
	switch s {
	case codemode.StatusCompleted:
		return "has completed"
	case codemode.StatusError:
		return "ended in an error"
	case codemode.StatusRejected:
		return "was rejected"
	case codemode.StatusCancelled:
		return "was cancelled"
	case codemode.StatusRolledBack:
		return "was rolled back"
	case codemode.StatusRollingBack:
		return "is rolling back"
	case codemode.StatusWaiting:
		return "is waiting for its downstream tasks"
	}
	return "is " + s.String() // running, paused
}

// unknownExecution is the refusal of a request about id, which may be
// anything a client sent: quoted clipped.
func unknownExecution(id string) error {
	return refusal(codemode.ErrUnknownExecution, "unknown execution %q", short.Clip(id, maxExecutionID))
}

// RefusalOutcome is the outcome shown for a refused request about
// execution id (IsRefusal): status error and the reason, with the
// execution's current status when it exists.
func (r *Runtime) RefusalOutcome(ctx context.Context, id string, err error) codemode.Outcome {
	out := codemode.Outcome{Status: codemode.StatusError, ExecutionID: short.Clip(id, maxExecutionID), Error: err.Error()}
	// (An unknown run may be one the policy hides: its status is not told.)
	if id != "" && !errors.Is(err, codemode.ErrUnknownExecution) {
		if e, gerr := r.getExecution(ctx, id); gerr == nil {
			out.Status = e.Status
		}
	}
	return out
}
