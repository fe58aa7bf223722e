package server

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

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
