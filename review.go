package codemode

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// PendingActions returns the actions of execution id's log that await a
// person (an approval or a sign-in), in seq order, with their arguments as
// logged ("null" when none were logged).
func PendingActions(id string, log []Entry) []PendingAction {
	var out []PendingAction
	for _, e := range log {
		if !e.State.AwaitsPerson() {
			continue
		}
		args := e.Args
		if len(args) == 0 {
			args = json.RawMessage("null")
		}
		a := PendingAction{ExecutionID: id, Seq: e.Seq, Connector: e.Connector, Method: e.Method, Args: args}
		if e.State == EntrySignIn {
			a.Awaits, a.Reason = AwaitsSignIn, e.Error
		}
		out = append(out, a)
	}
	return out
}

// PendingDigest names a set of pending actions exactly: the hex SHA-256 of
// each action's execution id, seq, connector, method and arguments as
// logged, in order. A surface that shows pending actions to a person sends
// it back with the person's decision (Review.Digest), and the runtime
// refuses the decision when what is pending no longer has that digest.
func PendingDigest(actions []PendingAction) string {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	for _, a := range actions {
		field([]byte(a.ExecutionID))
		field(binary.BigEndian.AppendUint64(nil, uint64(a.Seq)))
		field([]byte(a.Connector))
		field([]byte(a.Method))
		field(a.Args)
		field([]byte(a.Awaits))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A Review is a decision a person made about a paused run as a surface
// (the approval console) showed it to them.
type Review struct {
	// Digest is the PendingDigest of the pending actions the person saw.
	// The decision is refused with ErrNotAsShown when the run's pending
	// actions differ (another decision moved the run on, and it paused
	// again at another call). "" skips the check.
	Digest string
	// Reason is the person's reason for a rejection (optional); it is kept
	// in the run's error message, cut to MaxReasonChars.
	Reason string
}

// MaxReasonChars bounds a rejection's reason.
const MaxReasonChars = 500

// MethodInfo is what the runtime knows now of one connector method, for
// the people who decide about its calls.
type MethodInfo struct {
	// Known is false when no available connector has the method (then
	// the other fields are zero).
	Known bool
	// ApprovalReason says why a call with the given arguments needs
	// approval ("" when it does not).
	ApprovalReason string
	// Revertible reports whether a rollback can undo an applied call of it
	// (the connector reverts it natively, or the configuration gives a
	// revert function).
	Revertible bool
	// ReadOnly reports whether the source says it has no side effects.
	ReadOnly bool
}
