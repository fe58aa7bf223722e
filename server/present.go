package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
)

// What the model is shown of a run is the server's to decide: the runtime
// answers with whole outcomes (the store keeps them whole too), and every
// outcome and pending action a tool returns is cut here to
// Options.MaxResultChars, structurally (internal/truncate: valid JSON of
// the same shape, largest values first, with visible markers), as is the
// audit trail codemode_executions answers with.

// visible returns what a tool shows of o: its result (or error message)
// and its console lines cut together to MaxResultChars by truncate.Fit,
// and its pending actions' arguments (visiblePending).
func (s *Server) visible(o codemode.Outcome) codemode.Outcome {
	limit := s.opts.MaxResultChars
	if limit <= 0 {
		return o
	}
	if len(o.Result) == 0 && o.Error != "" { // cut as a JSON string, which Fit keeps a string
		raw, _ := json.Marshal(o.Error)
		raw, o.Logs = truncate.Fit(raw, o.Logs, limit)
		_ = json.Unmarshal(raw, &o.Error)
	} else {
		o.Result, o.Logs = truncate.Fit(o.Result, o.Logs, limit)
		o.Error = truncate.String(o.Error, limit)
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
	var structured map[string]any
	if err == nil {
		err = json.Unmarshal(b, &structured)
	}
	if err != nil {
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

// auditValueChars bounds the code, and the result with the logs, of each
// execution listed by codemode_executions.
const auditValueChars = 2000

// auditCalls is how many calls of each execution codemode_executions lists
// when its answer is bounded (Options.MaxResultChars > 0); the others are
// counted in moreCalls. The store keeps them all (codemode-mcp executions
// show ID).
const auditCalls = 20

// executionView is one execution in the audit trail.
type executionView struct {
	*codemode.Execution
	Calls []callView `json:"calls"`
	// MoreCalls counts the calls of the execution left out of Calls.
	MoreCalls int `json:"moreCalls,omitempty"`
}

// callView is one logged call of an execution, as the audit trail shows it.
type callView struct {
	Seq       int    `json:"seq"`
	Kind      string `json:"kind"`
	Connector string `json:"connector"`
	Method    string `json:"method"`
	Name      string `json:"name,omitempty"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
	// Reverts is the seq of the call a rollback made this call to undo.
	Reverts int `json:"reverts,omitempty"`
	// Task is the id of the downstream task the call runs as.
	Task string `json:"task,omitempty"`
	// DecidedBy is who approved or rejected the call, and DecidedAt when.
	DecidedBy codemode.Person `json:"decidedBy,omitzero"`
	DecidedAt time.Time       `json:"decidedAt,omitzero"`
}

// executions answers codemode_executions: the audit trail. With
// Options.MaxResultChars set, each execution lists its first auditCalls
// calls and the whole answer is cut to MaxResultChars structurally
// (truncate.Fit), so what the model sees stays bounded however many
// runs and calls there are. A run deleted while the list is read is left
// out.
func (s *Server) executions(ctx context.Context, in *executionsInput) (any, error) {
	execs, err := s.rt.Executions(ctx, codemode.ExecutionFilter{Limit: cmp.Or(in.Limit, 20), Status: in.status})
	if err != nil {
		return nil, err
	}
	maxChars := s.opts.MaxResultChars
	bounded := maxChars > 0
	views := make([]executionView, 0, len(execs))
	for _, e := range execs {
		v, err := s.auditView(ctx, e, bounded)
		switch {
		case errors.Is(err, codemode.ErrUnknownExecution):
			continue
		case err != nil:
			return nil, fmt.Errorf("execution %s: %w", e.ID, err)
		}
		views = append(views, v)
	}
	answer := map[string]any{"executions": views}
	if !bounded {
		return answer, nil
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	out, _ := truncate.Fit(b, nil, maxChars)
	return out, nil
}

// auditView is e as the audit trail shows it, briefly: its full values
// stay in the store (codemode-mcp executions show ID). Bounded, its log is
// read a page at a time with its values cut in the store (a run's log may
// hold store.max_run_log of them): its first auditCalls calls with their
// errors cut, and the others counted from their heads.
func (s *Server) auditView(ctx context.Context, e *codemode.Execution, bounded bool) (executionView, error) {
	e.Result, e.Logs = truncate.Fit(e.Result, e.Logs, auditValueChars)
	e.Code = truncate.String(e.Code, auditValueChars)
	v := executionView{Execution: e}
	q := codemode.LogQuery{NoOutput: true} // unbounded: every call, errors whole (the run is e)
	if bounded {
		q = codemode.LogQuery{Limit: auditCalls, Preview: auditValueChars, NoOutput: true}
	}
	_, calls, err := s.rt.ExecutionLog(ctx, e.ID, q)
	if err != nil {
		return v, err
	}
	if bounded && len(calls) == auditCalls {
		_, heads, err := s.rt.ExecutionLog(ctx, e.ID, codemode.LogQuery{After: calls[len(calls)-1].Seq, Preview: -1, NoOutput: true})
		if err != nil {
			return v, err
		}
		v.MoreCalls = len(heads)
	}
	v.Calls = make([]callView, 0, len(calls))
	for _, en := range calls {
		v.Calls = append(v.Calls, callView{Seq: en.Seq, Kind: en.Kind.String(), Connector: en.Connector, Method: en.Method,
			Name: en.Name, State: en.State.String(), Error: en.Error, Reverts: en.Reverts, Task: en.Task,
			DecidedBy: en.DecidedBy, DecidedAt: en.DecidedAt})
	}
	return v, nil
}
