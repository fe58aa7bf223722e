package codemode

import (
	"context"
	"encoding/json"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Outcome is what every surface (the codemode tool, the approval tools, the
// CLI) returns for a run. Its JSON form is the outcome the README documents.
type Outcome struct {
	Status      ExecStatus      `json:"status"`
	ExecutionID string          `json:"executionId"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	Logs        []string        `json:"logs,omitempty"`
	Pending     []PendingAction `json:"pending,omitempty"`
	// A rollback's report, each newest first: Reverted lists the seqs of
	// applied calls it undid; UnknownReverted the seqs of calls whose
	// outcome was unknown (their run was interrupted while they were in
	// flight) that it reverted all the same; Failures the reverts that
	// failed (the call stays as it was); NotReverted the calls that stay
	// as they were because nothing can revert them.
	Reverted        []int           `json:"reverted,omitempty"`
	UnknownReverted []int           `json:"unknownReverted,omitempty"`
	Failures        []RevertFailure `json:"failures,omitempty"`
	NotReverted     []KeptCall      `json:"notReverted,omitempty"`
}

// IsError reports whether the outcome is reported to the client as an error
// (isError: true).
func (o Outcome) IsError() bool { return o.Status == StatusError }

// PendingAction is a call awaiting a person: an approval, or a sign-in to
// its connector.
type PendingAction struct {
	ExecutionID string          `json:"executionId"`
	Seq         int             `json:"seq"`
	Connector   string          `json:"connector"`
	Method      string          `json:"method"`
	Args        json.RawMessage `json:"args"`
	// Awaits is what the call waits for: AwaitsApproval (omitted from the
	// JSON form) or AwaitsSignIn.
	Awaits Awaits `json:"awaits,omitempty"`
	// Reason says why a sign-in is needed (AwaitsSignIn only).
	Reason string `json:"reason,omitempty"`
	// StartedBy is who started the run (zero for a run logged before
	// people were recorded).
	StartedBy Person `json:"startedBy,omitzero"`
}

// Awaits tells what a pending action waits for.
type Awaits string

const (
	// AwaitsApproval: a person approves or rejects the call.
	AwaitsApproval Awaits = ""
	// AwaitsSignIn: a person signs in to the call's connector (a remote
	// server behind OAuth); the run then resumes like an approval, and
	// the call executes.
	AwaitsSignIn Awaits = "sign_in"
)

// RevertFailure is one revert that failed during a rollback.
type RevertFailure struct {
	Seq       int    `json:"seq"`
	Connector string `json:"connector"`
	Method    string `json:"method"`
	Error     string `json:"error"`
}

// KeptCall is a call a rollback left as it was because nothing can revert
// it: still applied, or of unknown outcome.
type KeptCall struct {
	Seq       int        `json:"seq"`
	Connector string     `json:"connector"`
	Method    string     `json:"method"`
	State     EntryState `json:"state"`
	Reason    string     `json:"reason"`
}

// Decision is a human's answer to an approval request.
type Decision int

const (
	// NoAnswer: the approver could not ask or got no answer; the run pauses.
	NoAnswer Decision = iota
	// Accept: the call executes in the same pass.
	Accept
	// Decline: the call is rejected and the run ends rejected.
	Decline
)

// An Approver asks a human about a pending call while the program waits
// (MCP elicitation). It is supplied per request by the surface that can ask.
type Approver interface {
	Ask(ctx context.Context, a PendingAction) (Decision, error)
}

// ConnectorInfo describes one connector as the runtime serves it.
type ConnectorInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Tools carry the final approval verdict (connector's own or config's).
	Tools []connectors.Tool `json:"tools"`
	// Error is set when the connector's tools could not be listed.
	Error string `json:"error,omitempty"`
	// NeedsSignIn is set when they could not be listed for want of a
	// person's sign-in (connectors.SignInRequired): a call pauses the run
	// until then.
	NeedsSignIn bool `json:"needsSignIn,omitempty"`
}
