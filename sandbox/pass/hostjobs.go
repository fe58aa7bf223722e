package pass

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
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
// does not delay the call by more than about rescueAfter: the rescuer (a
// timer) then starts it on a goroutine, so that a host stop can still
// interrupt the program.

// rescueAfter is how long a call may stay held before the rescuer starts
// it on a goroutine.
const rescueAfter = time.Millisecond

// hostJob is one host method call: f runs off the VM (it must not touch
// it) and returns the function, if any, that delivers its result on the
// VM goroutine.
type hostJob struct {
	id int // the seq of a connector call or step, in pass.flying; 0 for the host services, which are not
	f  func() func()
}

// hostJobs holds the call waiting for the end of the VM's turn, counts
// the jobs running on goroutines, and owns the rescuer (see above). It
// exists so that a program awaiting one call at a time costs no goroutine
// hand-off: an in-process host call went from 10.8 to 6.3 µs with it
// (docs/ARCHITECTURE.md, "Fast paths of a call").
//
// Invariants: at most one job is held; a held job leaves the slot exactly
// once, taken by the VM goroutine (take, or hold when a second job comes)
// or by the rescuer, which counts it in outstanding and starts it before
// it lets go of the lock, so that the VM goroutine never sees "nothing
// held, nothing outstanding" while a job is on its way to a goroutine;
// once stop has returned, the rescuer starts nothing.
type hostJobs struct {
	start func(*hostJob) // starts a goroutine running a job already counted in outstanding; the rescuer calls it under mu
	over  func() bool    // the pass has an outcome: the rescuer leaves a held job alone

	outstanding atomic.Int64 // jobs run on goroutines whose result has not reached the loop

	mu       sync.Mutex
	held     *hostJob
	heldGen  uint64      // counts the jobs held
	timer    *time.Timer // runs the rescuer (rescue), once a job was held
	armed    bool        // the timer is set
	armedGen uint64      // heldGen when it was set
	off      bool        // stop was called
}

// hold holds j when nothing else is pending (nothing held or outstanding,
// and no timer set: timersSet) and returns nil; otherwise it returns the
// jobs to spawn: the one held before, if any, and j. It is called on the
// VM goroutine.
func (q *hostJobs) hold(j *hostJob, timersSet bool) []*hostJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	prev := q.held
	if prev == nil && !timersSet && q.outstanding.Load() == 0 {
		q.held = j
		q.heldGen++
		q.armLocked()
		return nil
	}
	q.held = nil
	if prev != nil {
		return []*hostJob{prev, j}
	}
	return []*hostJob{j}
}

// take empties the slot and returns what it held (nil for nothing).
func (q *hostJobs) take() *hostJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.held
	q.held = nil
	return j
}

// spawn counts j and starts it on a goroutine.
func (q *hostJobs) spawn(j *hostJob) {
	q.outstanding.Add(1)
	q.start(j)
}

// idle reports whether no job runs on a goroutine.
func (q *hostJobs) idle() bool { return q.outstanding.Load() == 0 }

// delivered ends the count of a job spawned: its result has reached the
// loop, or it had none.
func (q *hostJobs) delivered() { q.outstanding.Add(-1) }

// armLocked makes sure the rescuer looks at the held job within
// rescueAfter; q.mu is held.
func (q *hostJobs) armLocked() {
	if q.armed || q.off {
		return
	}
	q.armed = true
	q.armedGen = q.heldGen
	if q.timer == nil {
		q.timer = time.AfterFunc(rescueAfter, q.rescue)
		return
	}
	q.timer.Reset(rescueAfter)
}

// rescue starts a job still held a full period after it was seen held.
func (q *hostJobs) rescue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.off:
	case q.held == nil || q.over():
		q.armed = false
	case q.heldGen != q.armedGen:
		// Another job is held now: give it its own period.
		q.armedGen = q.heldGen
		q.timer.Reset(rescueAfter)
	default:
		j := q.held
		q.held = nil
		q.armed = false
		q.outstanding.Add(1)
		q.start(j)
	}
}

// stop makes the rescuer start nothing more. It is called once the loop
// has stopped.
func (q *hostJobs) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.off = true
	if q.timer != nil {
		q.timer.Stop()
	}
}

// goHost runs f as a host job (see above). The host is not called once it
// has stopped the pass or the program has ended. A connector call or step
// (what names it: "notes.createNote", empty for the other host services)
// is in flight until f returns. It is called on the VM goroutine.
func (ps *pass) goHost(seq int, what string, f func() func()) {
	j := &hostJob{f: f}
	if what != "" {
		j.id = seq
		ps.fly(seq, what)
	}
	for _, sp := range ps.jobs.hold(j, len(ps.timers) > 0) {
		ps.jobs.spawn(sp)
	}
}

// turn runs f, a loop job that runs JavaScript, then the call it left
// held, if any.
func (ps *pass) turn(f func()) {
	ps.steps.cur = nil // a turn runs for the program, unless f enters a step
	ps.guard(f)
	ps.flushHeld()
}

// flushHeld runs the held call at the end of a turn: on the VM goroutine
// while nothing else is pending, one call after another as long as each
// result makes the program hold the next one; else on a goroutine.
func (ps *pass) flushHeld() {
	for {
		j := ps.jobs.take()
		switch {
		case j == nil:
			return
		case ps.isDone():
			ps.returned(j)
			return
		case !ps.jobs.idle() || len(ps.timers) > 0:
			ps.jobs.spawn(j)
			return
		}
		if cb := ps.callHost(j); cb != nil && !ps.isDone() {
			ps.guard(cb)
		}
	}
}

// startJob runs j, already counted, on a goroutine of its own (hostJobs.start).
func (ps *pass) startJob(j *hostJob) {
	ps.hostWG.Go(func() {
		cb := ps.callHost(j)
		if cb == nil {
			ps.jobs.delivered()
			return
		}
		ps.loop.RunOnLoop(func(*goja.Runtime) {
			ps.jobs.delivered()
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
	if ps.isDone() || ps.hostCtx.Err() != nil {
		return nil
	}
	cb = j.f()
	ps.returned(j)
	if ps.ctx.Err() != nil {
		ps.abort(failed(EndMessage(ps.ctx, ps.limits.Timeout)))
		return nil
	}
	return cb
}
