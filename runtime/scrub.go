package runtime

import (
	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// The runtime removes secrets (Options.Scrubber) where text enters it:
// what a connector answers is scrubbed before the log keeps it or the
// program sees it (so a replay sees what the first pass saw), and the
// records and outcomes it writes, which may quote an internal failure.
// Arguments and code are the program's own and kept as written.

// scrubAnswer scrubs a connector's answer to a call.
func (r *Runtime) scrubAnswer(res connectors.Result, err error) (connectors.Result, error) {
	if r.scrub.Empty() {
		return res, err
	}
	res.Value = r.scrub.JSON(res.Value)
	res.Message = r.scrub.String(res.Message)
	return res, catalog.ScrubError(r.scrub, err)
}

// scrubExecution scrubs the error and the console lines of an execution
// before it is written.
func (r *Runtime) scrubExecution(e *codemode.Execution) {
	if r.scrub.Empty() {
		return
	}
	e.Error = r.scrub.String(e.Error)
	e.Logs = scrubEach(e.Logs, r.scrub.String)
}

// scrubOutcome scrubs what an outcome shows.
func (r *Runtime) scrubOutcome(o codemode.Outcome) codemode.Outcome {
	if r.scrub.Empty() {
		return o
	}
	o.Result = r.scrub.JSON(o.Result)
	o.Error = r.scrub.String(o.Error)
	o.Logs = scrubEach(o.Logs, r.scrub.String)
	o.Pending = scrubEach(o.Pending, func(p codemode.PendingAction) codemode.PendingAction {
		p.Args = r.scrub.JSON(p.Args)
		return p
	})
	o.Failures = scrubEach(o.Failures, func(f codemode.RevertFailure) codemode.RevertFailure {
		f.Error = r.scrub.String(f.Error)
		return f
	})
	return o
}

// scrubEach returns a copy of xs with scrub applied to each (nil for nil):
// the caller's slice is left as it was.
func scrubEach[T any](xs []T, scrub func(T) T) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = scrub(x)
	}
	return out
}
