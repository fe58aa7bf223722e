package runtime

import (
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// The quota of a run's log: docs/ARCHITECTURE.md, "Bounded size". Without
// a bound on the sum of the values a run logs, one program could fill the
// disk (300 steps of 1 MiB made a 287 MiB store in seconds). Revert passes
// are not counted: a person asked for them.

// DefaultMaxRunLogBytes is the default quota of one run's log
// (Options.MaxRunLogBytes).
const DefaultMaxRunLogBytes = 64 << 20

// chargeLocked counts n more bytes of values against the run's quota. If
// they would take the log past it, nothing is counted, the pass stops
// (stopQuota) and chargeLocked returns the message, naming what describe
// says (what the bytes are, and what became of them), with the error that
// stops the program. describe is called only then: this runs for every
// call.
func (p *pass) chargeLocked(n int, describe func() (what, fate string)) (string, error) {
	total := p.logBytes + int64(n)
	if n == 0 || p.reverts != 0 || p.r.maxLog <= 0 || total <= p.r.maxLog {
		p.logBytes = total
		return "", nil
	}
	what, fate := describe()
	msg := fmt.Sprintf("the run's log reached its quota: %s, %s, would take it to %s, over the %s a run may log (store.max_run_log); %s. "+
		"What was logged before is kept. Log less in one run (ask for less, filter or paginate; return less from steps), or raise store.max_run_log",
		what, short.Bytes(int64(n)), short.Bytes(total), short.Bytes(p.r.maxLog), fate)
	return msg, p.stopLocked(stopQuota, msg, nil)
}

// chargeOutcomeLocked counts the result and error of e, about to be
// recorded in state to. Over the quota, e becomes a failure with the
// quota's message instead of its values (the new state returned), and the
// error returned stops the program.
func (p *pass) chargeOutcomeLocked(e *codemode.Entry, to codemode.EntryState) (codemode.EntryState, error) {
	msg, err := p.chargeLocked(len(e.Result)+len(e.Error), func() (string, string) {
		switch {
		case e.Kind == codemode.KindStep:
			return fmt.Sprintf("the value of step %d, %s", e.Seq, describeStep(e.Name)), "its value is not kept"
		case to == codemode.EntryError:
			return "the failure of " + entryRef(*e), "its message is not kept"
		}
		return "the result of " + entryRef(*e), "the call ran, but its result is not kept"
	})
	if err == nil {
		return to, nil
	}
	e.Result, e.Error = nil, msg
	return codemode.EntryError, err
}
