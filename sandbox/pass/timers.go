package pass

import (
	"math"
	"time"

	"github.com/dop251/goja"
)

// installTimers installs setTimeout, clearTimeout, setInterval and
// clearInterval on the event loop. They are bounded by the pass's timeout
// and cleared when the pass ends. Unlike Node's, an exception thrown by a
// timer callback fails the pass (Node would crash), so it is not lost.
// setImmediate is not provided.
func (ps *pass) installTimers(g *goja.Object) error {
	return setFuncs(ps.vm, g, "", map[string]func(goja.FunctionCall) goja.Value{
		"setTimeout":    ps.setTimer(false),
		"setInterval":   ps.setTimer(true),
		"clearTimeout":  ps.clearTimer,
		"clearInterval": ps.clearTimer,
	})
}

func (ps *pass) setTimer(repeat bool) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(ps.vm.NewTypeError("the callback must be a function, got %s", argKind(call.Argument(0))))
		}
		ms := call.Argument(1).ToFloat()
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		d := time.Duration(min(ms, float64(ps.limits.Timeout/time.Millisecond)+1)) * time.Millisecond
		var args []goja.Value
		if len(call.Arguments) > 2 {
			args = append(args, call.Arguments[2:]...)
		}
		ps.nextTimer++
		id := ps.nextTimer
		step := ps.steps.current() // a timer set inside a step runs inside it
		run := func(*goja.Runtime) {
			// The event loop clears a timer on a later turn of its loop, so a
			// tick already waiting can still come after the program cleared
			// it: the program's own table says whether the timer is live.
			if _, live := ps.timers[id]; !live {
				return
			}
			if !repeat {
				delete(ps.timers, id)
			}
			if ps.isDone() || ps.pastDeadline() {
				return
			}
			ps.turn(func() {
				restore := ps.steps.enter(step)
				_, err := fn(goja.Undefined(), args...)
				restore()
				ps.jsErr(err)
			})
		}
		if repeat {
			iv := ps.loop.SetInterval(run, d)
			if iv == nil {
				return goja.Undefined()
			}
			ps.timers[id] = func() { ps.loop.ClearInterval(iv) }
		} else {
			t := ps.loop.SetTimeout(run, d)
			if t == nil {
				return goja.Undefined()
			}
			ps.timers[id] = func() { ps.loop.ClearTimeout(t) }
		}
		return ps.vm.ToValue(id)
	}
}

func (ps *pass) clearTimer(call goja.FunctionCall) goja.Value {
	id := call.Argument(0).ToInteger()
	if clear, ok := ps.timers[id]; ok {
		delete(ps.timers, id)
		clear()
	}
	return goja.Undefined()
}

// pastDeadline reports whether the pass's deadline has passed by the wall
// clock. A timer is capped at the timeout plus a millisecond, so one set
// for longer fires just after the deadline; on a loaded machine it can
// fire before the goroutine that ends the pass at its deadline has run,
// and its callback must not run then (a program waiting 300 ms under a
// 100 ms timeout would complete instead of timing out).
func (ps *pass) pastDeadline() bool {
	d, ok := ps.ctx.Deadline()
	return ok && !time.Now().Before(d)
}
