package pass

import (
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
type stepContext struct {
	cur *sandbox.Step // the step whose function is running, or nil
}

var _ goja.AsyncContextTracker = (*stepContext)(nil)

// Grab is called when a reaction is registered (then, await).
func (s *stepContext) Grab() any { return s.cur }

// Resumed is called before a reaction runs.
func (s *stepContext) Resumed(o any) { s.cur, _ = o.(*sandbox.Step) }

// Exited is called after a reaction ran.
func (s *stepContext) Exited() { s.cur = nil }

// enter makes st current and returns a function restoring the previous one.
func (s *stepContext) enter(st *sandbox.Step) (restore func()) {
	prev := s.cur
	s.cur = st
	return func() { s.cur = prev }
}
