package runtime

import (
	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// The runtime removes secrets (Options.Scrubber) where text enters it from
// outside: what a connector answers is scrubbed before the log keeps it or
// the program sees it, so a program never holds a secret to pass on and a
// replay sees what the first pass saw; what a connector says of its tools is
// scrubbed when the catalog is built. The execution records and outcomes it
// writes are scrubbed as well, for messages that quote an internal failure.
// Arguments and code are the program's own and are kept as written (replay
// compares them).

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
	for i, l := range e.Logs {
		e.Logs[i] = r.scrub.String(l)
	}
}

// scrubOutcome scrubs what an outcome shows.
func (r *Runtime) scrubOutcome(o codemode.Outcome) codemode.Outcome {
	if r.scrub.Empty() {
		return o
	}
	o.Result = r.scrub.JSON(o.Result)
	o.Error = r.scrub.String(o.Error)
	if o.Logs != nil {
		logs := make([]string, len(o.Logs))
		for i, l := range o.Logs {
			logs[i] = r.scrub.String(l)
		}
		o.Logs = logs
	}
	if o.Pending != nil {
		ps := make([]codemode.PendingAction, len(o.Pending))
		for i, p := range o.Pending {
			p.Args = r.scrub.JSON(p.Args)
			ps[i] = p
		}
		o.Pending = ps
	}
	if o.Failures != nil {
		fs := make([]codemode.RevertFailure, len(o.Failures))
		for i, f := range o.Failures {
			f.Error = r.scrub.String(f.Error)
			fs[i] = f
		}
		o.Failures = fs
	}
	return o
}
