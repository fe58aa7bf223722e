package pass

import (
	"slices"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
)

// stepContext knows whether JavaScript is running on behalf of a
// codemode.step function, across its awaits and timers: it is goja's
// AsyncContextTracker, so a promise reaction runs in the context in which it
// was registered. Used only on the VM goroutine.
//
// Inside a step, whose value is replayed without running it again:
//   - connector calls, nested steps and codemode.run throw a TypeError, since
//     they would take sequence numbers that a replay would not take;
//   - services (codemode.search) take no sequence number either: the
//     host answers them without logging them;
//   - Date and Math.random neither consume nor record the replayed clock
//     (the step's value is what is recorded).
//
// goja tells the tracker about promise reactions only: a thenable's then
// (await or return of an object with a then method) runs in a job of its
// own, and a then getter of a reaction's value after the reaction has
// exited, without Resumed. JavaScript that runs after a reaction has
// exited runs in an unknown context, and current counts it as the
// innermost step still running, if any: a program could otherwise make
// calls from a step that its replay would not make. (A thenable of the
// program's own code, outside every step, is refused only while a step
// runs at the same time.)
type stepContext struct {
	cur     *sandbox.Step   // the step whose function is running, nil, or unknownStep
	running []*sandbox.Step // the steps whose function has run and whose value is not settled, in start order
}

// unknownStep is cur in JavaScript that runs after a reaction has exited.
var unknownStep = &sandbox.Step{}

var _ goja.AsyncContextTracker = (*stepContext)(nil)

// Grab is called when a reaction is registered (then, await).
func (s *stepContext) Grab() any { return s.cur }

// Resumed is called before a reaction runs.
func (s *stepContext) Resumed(o any) { s.cur, _ = o.(*sandbox.Step) }

// Exited is called after a reaction ran: what runs next, until a reaction
// resumes or the loop's turn ends, is a thenable job or a then getter.
func (s *stepContext) Exited() { s.cur = unknownStep }

// current returns the step on whose behalf JavaScript is running, or nil.
func (s *stepContext) current() *sandbox.Step {
	if s.cur != unknownStep {
		return s.cur
	}
	if n := len(s.running); n > 0 {
		return s.running[n-1]
	}
	return nil
}

// enter makes st current and returns a function restoring the previous one.
func (s *stepContext) enter(st *sandbox.Step) (restore func()) {
	prev := s.cur
	s.cur = st
	return func() { s.cur = prev }
}

// started records that st's function is about to run; settled, that its
// value or failure is known.
func (s *stepContext) started(st *sandbox.Step) { s.running = append(s.running, st) }

func (s *stepContext) settled(st *sandbox.Step) {
	if i := slices.Index(s.running, st); i >= 0 {
		s.running = slices.Delete(s.running, i, i+1)
	}
}
