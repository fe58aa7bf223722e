package runtime

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors of the Runtime. They are returned wrapped in an error whose
// message names the execution (or snippet), its current status and what is
// allowed, so surfaces can show the message as-is and test with errors.Is.
var (
	// ErrWrongState: the execution is not in a state that allows the request
	// (approve a completed run, reject twice, …). The request changed nothing.
	ErrWrongState = errors.New("execution is in the wrong state for this request")
	// ErrUnknownExecution: no execution has that id.
	ErrUnknownExecution = errors.New("unknown execution")
	// ErrUnknownSnippet: no snippet has that name.
	ErrUnknownSnippet = errors.New("unknown snippet")
	// ErrConnectorsChanged: a paused run used connectors that are gone or
	// whose tool schemas changed since, so replaying it is unsafe.
	ErrConnectorsChanged = errors.New("connectors changed since the execution paused")
	// ErrClosed: the Runtime was closed.
	ErrClosed = errors.New("runtime is closed")
)

// userError carries a full, user-facing message and unwraps to a sentinel.
type userError struct {
	sentinel error
	msg      string
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.sentinel }

func wrongState(format string, args ...any) error {
	return &userError{sentinel: ErrWrongState, msg: fmt.Sprintf(format, args...)}
}

func unknownExecution(id string) error {
	return &userError{sentinel: ErrUnknownExecution, msg: fmt.Sprintf("unknown execution %q (list them with codemode_executions)", id)}
}

func unknownSnippet(name string) error {
	return &userError{sentinel: ErrUnknownSnippet, msg: fmt.Sprintf("unknown snippet %q (list them with codemode_snippets)", name)}
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsRefusal reports whether err refuses a request the caller can correct
// (an unknown execution or snippet, an execution in the wrong state,
// connectors changed since a pause) rather than an internal failure.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrWrongState) || errors.Is(err, ErrUnknownExecution) ||
		errors.Is(err, ErrUnknownSnippet) || errors.Is(err, ErrConnectorsChanged)
}

// RefusalOutcome is the outcome shown for a refused request about
// execution id (IsRefusal): status error and the reason, with the
// execution's current status when it exists.
func (r *Runtime) RefusalOutcome(ctx context.Context, id string, err error) Outcome {
	out := Outcome{Status: StatusError, ExecutionID: id, Error: err.Error()}
	if id != "" {
		if e, gerr := r.getExecution(ctx, id); gerr == nil {
			out.Status = e.Status
		}
	}
	return out
}
