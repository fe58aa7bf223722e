package codemode

import "errors"

// Errors of the engine (package runtime). They are returned wrapped in an
// error whose message names the execution (or snippet), its current status
// and what is allowed, so surfaces can show the message as-is and test with
// errors.Is.
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
	// ErrNotAsShown: a person's decision about a paused run named pending
	// actions (Review.Digest) other than those pending now: the run moved
	// on since they were shown. Nothing changed.
	ErrNotAsShown = errors.New("the pending actions changed since they were shown")
	// ErrNeedsSignIn: a paused run waits for a person to sign in to one of
	// its connectors, and nobody has yet. Nothing changed.
	ErrNeedsSignIn = errors.New("a sign-in is still needed")
	// ErrNotAllowed: the policy (package policy) does not let the person
	// make this decision about a run they may see; the message says why.
	// A run they may not see is ErrUnknownExecution instead.
	ErrNotAllowed = errors.New("not allowed by the policy")
	// ErrClosed: the Runtime was closed.
	ErrClosed = errors.New("runtime is closed")
)

// IsRefusal reports whether err refuses a request the caller can correct
// (an unknown execution or snippet, an execution in the wrong state,
// connectors changed since a pause, a decision about actions no longer
// pending, an approval of a run still waiting for a sign-in, a decision
// the policy does not allow) rather than
// an internal failure.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrWrongState) || errors.Is(err, ErrUnknownExecution) ||
		errors.Is(err, ErrUnknownSnippet) || errors.Is(err, ErrConnectorsChanged) ||
		errors.Is(err, ErrNotAsShown) || errors.Is(err, ErrNeedsSignIn) ||
		errors.Is(err, ErrNotAllowed)
}
