package codemode

import (
	"errors"
	"fmt"
	"slices"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// ExecStatus is the status of an execution.
type ExecStatus int

const (
	// StatusRunning: a pass of the program runs in the process that owns
	// the execution.
	StatusRunning ExecStatus = iota + 1
	// StatusPaused: a call awaits approval or a sign-in; no process owns the
	// execution.
	StatusPaused
	StatusCompleted
	StatusError
	StatusRejected
	StatusRolledBack
	// StatusRollingBack: a rollback reverts the execution's calls in the
	// process that owns it.
	StatusRollingBack
	// StatusCancelled: the client that started the run as a task cancelled
	// it (tasks/cancel) while it ran or waited for a person. It stays
	// cancelled even if a pass that was running then still finishes:
	// what that pass logged stays in the log, and its calls can be rolled
	// back.
	StatusCancelled
	// StatusWaiting: calls of the run run as tasks of their downstream
	// server (their entries are waiting, their task ids logged) and no
	// pass runs: no process owns the execution, and no worker process is
	// held. Whichever process sees those tasks end first resumes it
	// (waiting -> running), and its pass replays the log, reading the
	// tasks' results.
	StatusWaiting
)

// execStatusOrder lists the statuses in the order messages name them.
var execStatusOrder = []ExecStatus{StatusRunning, StatusPaused, StatusWaiting, StatusCompleted, StatusError, StatusRejected, StatusCancelled, StatusRollingBack, StatusRolledBack}

var execStatusNames = names[ExecStatus]{
	StatusRunning:     "running",
	StatusPaused:      "paused",
	StatusCompleted:   "completed",
	StatusError:       "error",
	StatusRejected:    "rejected",
	StatusRolledBack:  "rolled_back",
	StatusRollingBack: "rolling_back",
	StatusCancelled:   "cancelled",
	StatusWaiting:     "waiting",
}

// ExecStatuses returns every execution status.
func ExecStatuses() []ExecStatus { return append([]ExecStatus(nil), execStatusOrder...) }

func (s ExecStatus) String() string { return execStatusNames.name(s) }

// Terminal reports whether the program is done: no further pass of it can
// run (a rollback may still revert its calls).
func (s ExecStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusError || s == StatusRejected || s == StatusCancelled || s == StatusRolledBack
}

// Claimed reports whether a process works on an execution in this status
// (it runs a pass or a rollback, or watches the downstream tasks the run
// waits for), so the execution has an owner, and is recovered (a waiting
// one taken over) when that owner is gone.
func (s ExecStatus) Claimed() bool {
	return s == StatusRunning || s == StatusRollingBack || s == StatusWaiting
}

// ParseExecStatus parses the String form.
func ParseExecStatus(s string) (ExecStatus, error) {
	v, err := execStatusNames.parse(s, "execution status")
	if err != nil {
		names := make([]string, len(execStatusOrder))
		for i, st := range execStatusOrder {
			names[i] = st.String()
		}
		return 0, fmt.Errorf("%w (want %s)", err, short.OrList(names))
	}
	return v, nil
}

func (s ExecStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *ExecStatus) UnmarshalText(b []byte) error { return unmarshalText(s, b, ParseExecStatus) }

// EntryState is the state of one log entry (a connector call or a step).
type EntryState int

const (
	// EntryExecuting: decided, result not yet recorded.
	EntryExecuting EntryState = iota + 1
	// EntryApplied: the call ran and its result is recorded.
	EntryApplied
	// EntryPending: awaiting approval.
	EntryPending
	// EntryRejected: a human rejected it; it never ran.
	EntryRejected
	// EntryReverted: applied, then undone by a rollback.
	EntryReverted
	// EntryError: the call failed; its error is recorded.
	EntryError
	// EntryUnknown: the call was executing when its run was interrupted
	// (the process died): it may or may not have taken effect. A rollback
	// reverts it when it has a revert.
	EntryUnknown
	// EntrySignIn: awaiting a person's sign-in to the call's connector (a
	// remote server that needs OAuth). The call was not made, or was
	// refused before it could take effect (connectors.SignInRequired);
	// the entry's Error says why. Once the person has signed in, the run
	// resumes like an approval and the call executes.
	EntrySignIn
	// EntryWaiting: the call runs as a task of its downstream server, whose
	// id (Entry.Task) was logged before anything waited for it. Its run
	// waits (StatusWaiting) or is paused; a pass that reaches the entry
	// again reads the task (it does not call the tool again) and records
	// its result once it has ended.
	EntryWaiting
)

var entryStateNames = names[EntryState]{
	0:              unreadable,
	EntryExecuting: "executing",
	EntryApplied:   "applied",
	EntryPending:   "pending",
	EntryRejected:  "rejected",
	EntryReverted:  "reverted",
	EntryError:     "error",
	EntryUnknown:   "unknown",
	EntrySignIn:    "sign_in",
	EntryWaiting:   "waiting",
}

// AwaitsPerson reports whether an entry in this state waits for a person
// (an approval or a sign-in): its run is paused, and it is rejected when
// the run ends.
func (s EntryState) AwaitsPerson() bool { return s == EntryPending || s == EntrySignIn }

func (s EntryState) String() string { return entryStateNames.name(s) }

// ParseEntryState parses the String form.
func ParseEntryState(s string) (EntryState, error) {
	return entryStateNames.parse(s, "log entry state")
}

func (s EntryState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *EntryState) UnmarshalText(b []byte) error { return unmarshalText(s, b, ParseEntryState) }

// names is the text form of an enumeration whose values start at 1:
// names[v] is v's. names[0], if set, is how the zero value reads, which
// no text parses as.
type names[T ~int] []string

// unreadable is the name of the zero EntryState and EntryKind: what a log
// entry the store could not decode holds (ClippedEntries), which a
// surface shows.
const unreadable = "unreadable"

// name is v's name; a value without one is named by its type and
// number: codemode.ExecStatus(12).
func (n names[T]) name(v T) string {
	if v < 0 || int(v) >= len(n) || n[v] == "" {
		return fmt.Sprintf("%T(%d)", v, int(v))
	}
	return n[v]
}

// parse is the value named s; what names the enumeration in the error.
func (n names[T]) parse(s, what string) (T, error) {
	for i, name := range n {
		if i > 0 && name == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %s", what, short.Quote(s))
}

// unmarshalText sets *v to what parse reads in b.
func unmarshalText[T any](v *T, b []byte, parse func(string) (T, error)) error {
	x, err := parse(string(b))
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// ErrIllegalTransition is returned (wrapped) for a state change the state
// machine does not allow.
var ErrIllegalTransition = errors.New("illegal state transition")

// entryTransitions lists the legal moves of a log entry. A new entry starts
// executing or pending (state 0 is "no entry yet").
var entryTransitions = map[EntryState][]EntryState{
	0:              {EntryExecuting, EntryPending, EntrySignIn},
	EntryExecuting: {EntryApplied, EntryError, EntryExecuting, EntryUnknown, EntrySignIn, EntryWaiting}, // executing again: replay; unknown: recovery; sign_in: refused for want of a sign-in; waiting: its downstream runs it as a task
	EntryPending:   {EntryExecuting, EntryRejected},
	EntrySignIn:    {EntryExecuting, EntryPending, EntryRejected}, // pending: the method, known once signed in, needs approval
	EntryWaiting:   {EntryApplied, EntryError, EntryUnknown},      // its task ended (or could not be read: error); unknown: recovery
	EntryApplied:   {EntryReverted},
	EntryUnknown:   {EntryReverted},
}

// Transition is the one place log entry states move. It returns to, or an
// error wrapping ErrIllegalTransition naming both states.
func Transition(from, to EntryState) (EntryState, error) {
	return transition(entryTransitions, "log entry", from, to)
}

// execTransitions lists the legal moves of an execution. Recovery moves a
// claimed execution whose owner is gone to error; a cancellation moves a
// running, paused or waiting one to cancelled, from whichever process
// receives it; a waiting one that cannot resume (the connectors it used
// changed) ends in error.
var execTransitions = map[ExecStatus][]ExecStatus{
	0:                 {StatusRunning},
	StatusRunning:     {StatusPaused, StatusWaiting, StatusCompleted, StatusError, StatusRejected, StatusCancelled},
	StatusWaiting:     {StatusRunning, StatusCancelled, StatusError},
	StatusPaused:      {StatusRunning, StatusRejected, StatusRollingBack, StatusCancelled},
	StatusCompleted:   {StatusRollingBack},
	StatusError:       {StatusRollingBack},
	StatusRejected:    {StatusRollingBack},
	StatusCancelled:   {StatusRollingBack},
	StatusRollingBack: {StatusRolledBack, StatusError},
	StatusRolledBack:  nil,
}

// TransitionExec is the one place execution statuses move.
func TransitionExec(from, to ExecStatus) (ExecStatus, error) {
	return transition(execTransitions, "execution", from, to)
}

// transition moves from to to when moves (a state's legal moves) allow it;
// what names the kind of state in the error.
func transition[S interface {
	~int
	String() string
}](moves map[S][]S, what string, from, to S) (S, error) {
	if slices.Contains(moves[from], to) {
		return to, nil
	}
	name := from.String()
	if from == 0 {
		name = "new"
	}
	return from, fmt.Errorf("%w: %s %s -> %s", ErrIllegalTransition, what, name, to)
}
