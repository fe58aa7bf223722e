package server

import (
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
)

// What the model is shown of a run is the server's to decide: the runtime
// answers with whole outcomes (the store keeps them whole too), and every
// outcome and pending action a tool returns is cut here to
// Options.MaxResultChars, structurally (internal/truncate: valid JSON of
// the same shape, largest values first, with visible markers).

// visible returns what a tool shows of o: its result (or error message)
// and its console lines cut together to MaxResultChars by truncate.Fit,
// and its pending actions' arguments (visiblePending).
func (s *Server) visible(o codemode.Outcome) codemode.Outcome {
	limit := s.opts.MaxResultChars
	if limit <= 0 {
		return o
	}
	switch {
	case len(o.Result) > 0:
		o.Result, o.Logs = truncate.Fit(o.Result, o.Logs, limit)
		o.Error = truncate.String(o.Error, limit)
	case o.Error != "":
		raw, err := json.Marshal(o.Error)
		if err != nil { // a Go string always marshals
			return o
		}
		raw, o.Logs = truncate.Fit(raw, o.Logs, limit)
		if err := json.Unmarshal(raw, &o.Error); err != nil {
			return o
		}
	default:
		_, o.Logs = truncate.Fit(nil, o.Logs, limit)
	}
	if len(o.Logs) == 0 {
		o.Logs = nil
	}
	o.Pending = s.visiblePending(o.Pending)
	return o
}

// minPendingShare is the least a pending action's arguments are cut to
// when many share MaxResultChars.
const minPendingShare = 200

// visiblePending cuts the arguments of pending actions to what tools
// show: each to an equal share of MaxResultChars (at least
// minPendingShare), structurally, as results are. The log keeps them
// whole: approval runs the call with the arguments as logged.
func (s *Server) visiblePending(ps []codemode.PendingAction) []codemode.PendingAction {
	limit := s.opts.MaxResultChars
	if limit <= 0 || len(ps) == 0 {
		return ps
	}
	share := max(limit/len(ps), minPendingShare)
	out := slices.Clone(ps)
	for i := range out {
		out[i].Args, _ = truncate.Fit(out[i].Args, nil, share)
	}
	return out
}

// outcomeResult renders a runtime outcome as a tool result: the outcome
// object, cut to what the model is shown (visible), as structuredContent
// and its JSON as text; isError for script failures so the model can fix
// its code.
func (s *Server) outcomeResult(o codemode.Outcome) *mcp.CallToolResult {
	return valueResult(s.visible(o), o.IsError())
}

// valueResult renders any JSON-able value the same way.
func valueResult(v any, isError bool) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultError("internal error: cannot encode result: " + err.Error())
	}
	var structured map[string]any
	if err := json.Unmarshal(b, &structured); err != nil {
		return mcp.NewToolResultError("internal error: cannot encode result: " + err.Error())
	}
	res := mcp.NewToolResultStructured(structured, string(b))
	res.IsError = isError
	return res
}

// errorOutcome is the outcome reported for a refused request about an
// execution: its current status (when known) and the reason.
type errorOutcome struct {
	Status      string `json:"status"`
	ExecutionID string `json:"executionId,omitempty"`
	Error       string `json:"error"`
}

// badArguments is the result of a request whose arguments do not decode:
// a tool error the model can fix, naming what was wrong.
func badArguments(err error) *mcp.CallToolResult {
	return valueResult(errorOutcome{Status: "error", Error: err.Error()}, true)
}
