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
	// Reverted lists the seqs a rollback undid, newest first.
	Reverted []int `json:"reverted,omitempty"`
	// Failures lists the reverts that failed during a rollback.
	Failures []RevertFailure `json:"failures,omitempty"`
}

// IsError reports whether the outcome is reported to the client as an error
// (isError: true).
func (o Outcome) IsError() bool { return o.Status == StatusError }

// PendingAction is a call awaiting approval.
type PendingAction struct {
	ExecutionID string          `json:"executionId"`
	Seq         int             `json:"seq"`
	Connector   string          `json:"connector"`
	Method      string          `json:"method"`
	Args        json.RawMessage `json:"args"`
}

// RevertFailure is one revert that failed during a rollback.
type RevertFailure struct {
	Seq       int    `json:"seq"`
	Connector string `json:"connector"`
	Method    string `json:"method"`
	Error     string `json:"error"`
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
}
