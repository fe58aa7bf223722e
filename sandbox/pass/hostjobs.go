package pass

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/dop251/goja"
)

// Host jobs: how the host methods a program calls are run.
//
// A call made while nothing else is pending (no other host job in flight,
// no timer set) is held until the end of the VM's current turn (the loop
// job that made it, with its microtasks), then run on the VM goroutine
// itself, and its result handed to the program at once: a program awaiting
// one call at a time costs no goroutine and no thread wake-up per call.
// Nothing else could have run on the loop meanwhile: no result can arrive
// and no timer can fire; the deadline or a cancellation cancels the call's
// context as before.
//
// Every other host job runs on a goroutine of its own (owned by hostWG),
// and its result comes back through loop.RunOnLoop: when a second call is
// made in the same turn (Promise.all), both run on goroutines at once;
// when the turn ends with a timer set or another job in flight, the held
// one does. A turn that runs for long after making a call (a busy loop)
// does not delay the call by more than about rescueAfter: the rescuer
// goroutine then starts it on a goroutine, so that a host stop can still
// interrupt the program.

// rescueAfter is how long a call may stay held before the rescuer starts
// it on a goroutine.
const rescueAfter = time.Millisecond

// hostJob is one host method call: f runs off the VM (it must not touch
// it) and returns the function, if any, that delivers its result on the
// VM goroutine.
type hostJob struct {
	id int // in pass.inflight; 0 for host services that are not tracked
	f  func() func()
}

// goHost runs f as a host job (see above). The host is not called once it
// has stopped the pass or the program has ended. label names a connector
// call or step (what is empty for the other host services): it is in
// flight until f returns. It is called on the VM goroutine.
func (ps *pass) goHost(label callLabel, f func() func()) {
	j := &hostJob{f: f}
	ps.mu.Lock()
	if label.what != "" {
		ps.nextHost++
		j.id = ps.nextHost
		ps.inflight[j.id] = label
	}
	prev := ps.held
	if prev == nil && ps.inlineable() {
		ps.held = j
		ps.heldGen++
		ps.armRescueLocked()
		ps.mu.Unlock()
		return
	}
	ps.held = nil
	ps.mu.Unlock()
	if prev != nil {
		ps.spawn(prev)
	}
	ps.spawn(j)
}

// inlineable reports whether a host job run on the VM goroutine would
// hold nothing up: no other job is in flight and no timer is set. It is
// called on the VM goroutine.
func (ps *pass) inlineable() bool {
	return ps.outstanding.Load() == 0 && len(ps.timers) == 0
}

// turn runs f, a loop job that runs JavaScript, then the call it left
// held, if any.
func (ps *pass) turn(f func()) {
	ps.guard(f)
	ps.flushHeld()
}

// flushHeld runs the held call at the end of a turn: on the VM goroutine
// while nothing else is pending, one call after another as long as each
// result makes the program hold the next one; else on a goroutine.
func (ps *pass) flushHeld() {
	for {
		ps.mu.Lock()
		j := ps.held
		ps.held = nil
		ps.mu.Unlock()
		switch {
		case j == nil:
			return
		case ps.over():
			ps.returned(j)
			return
		case !ps.inlineable():
			ps.spawn(j)
			return
		}
		if cb := ps.callHost(j); cb != nil && !ps.isDone() {
			ps.guard(cb)
		}
	}
}

// spawn runs j on a goroutine of its own. It is called on the VM
// goroutine.
func (ps *pass) spawn(j *hostJob) {
	ps.outstanding.Add(1)
	ps.startJob(j)
}

// startJob runs j, already counted in outstanding, on a goroutine of its own.
func (ps *pass) startJob(j *hostJob) {
	ps.hostWG.Go(func() {
		cb := ps.callHost(j)
		if cb == nil {
			ps.outstanding.Add(-1)
			return
		}
		ps.loop.RunOnLoop(func(*goja.Runtime) {
			ps.outstanding.Add(-1)
			if ps.isDone() {
				return
			}
			ps.turn(cb)
		})
	})
}

// callHost calls the host for j unless the pass is over, and returns the
// function delivering the result (nil when there is nothing to deliver).
// A panic of the host is an internal failure; the deadline or a
// cancellation decides the outcome, not the host's reaction to it.
func (ps *pass) callHost(j *hostJob) (cb func()) {
	defer ps.returned(j)
	defer func() {
		if r := recover(); r != nil {
			ps.internalFail(fmt.Errorf("sandbox: host panic: %v\n%s", r, debug.Stack()))
			cb = nil
		}
	}()
	if ps.stopped.Load() || ps.hostCtx.Err() != nil {
		return nil
	}
	cb = j.f()
	ps.returned(j)
	if ps.ctx.Err() != nil {
		ps.abort(failed(deadlineMessage(ps.ctx, ps.limits.Timeout)))
		return nil
	}
	return cb
}

// returned takes j out of flight: before its result is delivered.
func (ps *pass) returned(j *hostJob) {
	if j.id != 0 {
		ps.mu.Lock()
		delete(ps.inflight, j.id)
		ps.mu.Unlock()
	}
}

// armRescueLocked makes sure the rescuer looks at the held call within
// rescueAfter; ps.mu is held.
func (ps *pass) armRescueLocked() {
	if ps.rescueArmed || ps.rescueOff {
		return
	}
	ps.rescueArmed = true
	ps.rescueGen = ps.heldGen
	if ps.rescue == nil {
		ps.rescue = time.NewTimer(rescueAfter)
		ps.rescueStop = make(chan struct{})
		ps.rescueWG.Go(ps.rescuer)
		return
	}
	ps.rescue.Reset(rescueAfter)
}

// rescuer starts a call still held a full period after it was seen held.
func (ps *pass) rescuer() {
	for {
		select {
		case <-ps.rescueStop:
			return
		case <-ps.rescue.C:
		}
		ps.mu.Lock()
		j := ps.held
		switch {
		case j == nil || ps.done:
			j = nil
			ps.rescueArmed = false
		case ps.heldGen != ps.rescueGen:
			// Another call is held now: give it its own period.
			j = nil
			ps.rescueGen = ps.heldGen
			ps.rescue.Reset(rescueAfter)
		default:
			ps.held = nil
			ps.rescueArmed = false
			// Counted before the VM goroutine can see no call held, so that
			// it does not run the next one inline meanwhile.
			ps.outstanding.Add(1)
		}
		ps.mu.Unlock()
		if j != nil {
			ps.startJob(j)
		}
	}
}

// stopRescuer ends the rescuer and waits for it; no call is held or
// spawned by it afterwards. It is called once the loop has stopped.
func (ps *pass) stopRescuer() {
	ps.mu.Lock()
	ps.rescueOff = true
	stop := ps.rescueStop
	ps.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	ps.rescueWG.Wait()
	ps.rescue.Stop()
}
