// Package pass runs one pass of a program in a fresh goja runtime
// (Execute): the globals, host calls, steps, snippets, timers, limits and
// the outcome. InProcess is the sandbox.Executor that runs each pass here,
// in this process; sandbox/worker runs the same passes in worker
// processes. The types of the API (Program, Host, Outcome…) are package
// sandbox's.
package pass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja_nodejs/eventloop"
)

var (
	// errTimedOut is the cause of a pass context that hit Limits.Timeout.
	errTimedOut = errors.New("sandbox: pass timed out")
	// errPassOver is the value the VM is interrupted with once the pass has
	// an outcome.
	errPassOver = errors.New("sandbox: pass over")
	// errProgramEnded is the cause of the host calls' context once the
	// program has settled or failed.
	errProgramEnded = errors.New("sandbox: the program ended before this call returned")
)

// LimitError is a cause of the pass context whose message is the outcome's
// error as it is (a memory limit hit, a cancellation with a reason).
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// pass is one execution of one program in a fresh goja runtime driven by a
// goja_nodejs event loop. The loop's goroutine (the VM goroutine) owns the
// runtime; host calls run between two turns of the VM on its goroutine, or
// on goroutines of their own, owned by hostWG, and come back through
// loop.RunOnLoop (see hostjobs.go). The first outcome recorded wins; once
// there is one, the VM is interrupted, the loop stops and every callback
// that reaches the loop does nothing.
//
// Calls in flight when the program ends: once the program has settled
// (returned or thrown) or failed (a limit, the timeout, a cancellation),
// the context of the host calls still running is canceled and host calls
// not yet started are not made, so no call runs unseen after the program
// is over. The outcome's logs then end with a line such as
//
//	[warn] 2 calls were still in flight when the program returned and were cancelled: notes.createNote #3, notes.deleteNote #4. Await every call: the result of a call in flight is lost and it may or may not have taken effect.
//
// A host stop (pause, refusal) is different: calls already running finish
// and are waited for, so that what they did is recorded.
type pass struct {
	// fixed at creation
	ctx        context.Context // canceled at the deadline, on cancellation and when Run returns
	hostCtx    context.Context // the host calls' context: ctx, also canceled when the program ends
	cancelHost context.CancelCauseFunc
	host       sandbox.Host
	prog       *source.Normalized
	globals    []sandbox.Global
	services   []sandbox.Service
	limits     sandbox.Limits
	log        *slog.Logger
	loop       *eventloop.EventLoop
	cache      *source.Cache     // normalises snippets (codemode.run)
	frames     []goja.StackFrame // callSite's buffer; used on the VM goroutine

	hostWG sync.WaitGroup // host jobs run on goroutines of their own
	jobs   hostJobs       // the held call, the count of jobs on goroutines, the rescuer (hostjobs.go)
	// done is set, under mu, once the pass has an outcome (the host's
	// stop among them): the host is not called any more.
	done atomic.Bool

	// owned by the VM goroutine; read by Execute once it has exited
	vm         *goja.Runtime
	h          *helpers
	steps      stepContext
	clock      *clockState
	seq        int               // the last sequence number taken
	requests   int               // the host requests counted against Limits.MaxCalls (see count)
	sources    map[string]loaded // by file name: the program and the snippets run
	logs       logState
	rejections rejectionTracker
	timers     map[int64]func() // id -> clear
	nextTimer  int64
	conns      []*connector // by index in globals
	callNative goja.Value   // the Go side of the connector methods made in JavaScript
	isObject   goja.Value   // argKind(v) == "object", for them

	mu        sync.Mutex
	out       sandbox.Outcome // Status, Result, Error, Stop
	internal  error           // an internal failure: Run returns it
	vmRef     *goja.Runtime   // for Interrupt from other goroutines
	flying    map[int]string  // the connector calls and steps in flight, named by seq (inflight.go)
	cancelled map[int]string  // those in flight when the program ended
}

// loaded is a compiled program of the pass, for error positions.
type loaded struct {
	norm    *source.Normalized
	snippet string // the snippet's name; "" for the program
}

// Execute runs one pass of p to its outcome: the body of a Run shared by
// the executors (the in-process one, and a worker process with a Host that
// forwards over its pipe). The program is normalised through cache, which
// serves codemode.run's snippets too (NewCache(0, 0) keeps nothing); log
// receives internal failures. Neither may be nil. It returns only after
// the VM goroutine, every host goroutine and every timer it started have
// ended; the error is an internal failure.
func Execute(ctx context.Context, p sandbox.Program, host sandbox.Host, cache *source.Cache, log *slog.Logger) (sandbox.Outcome, error) {
	if o, tooLarge := CodeTooLarge(p); tooLarge {
		return o, nil
	}
	// The timeout counts normalising, which cannot be interrupted (up to
	// seconds for a MiB of code): a pass whose deadline passed meanwhile
	// ends as timed out before it runs, as the worker's parent counts it.
	limits := p.Limits.WithDefaults()
	passCtx, cancel := context.WithTimeoutCause(ctx, limits.Timeout, errTimedOut)
	defer cancel()
	prog, err := cache.Normalize(p.Code, source.ProgramFile)
	if se := (*source.SyntaxError)(nil); errors.As(err, &se) {
		return sandbox.Outcome{Status: sandbox.Failed, Error: se.Error(), Clock: p.Clock}, nil
	}
	if err != nil {
		return sandbox.Outcome{}, err
	}
	if passCtx.Err() != nil {
		return failed(EndMessage(passCtx, limits.Timeout)), nil
	}
	// Before the first statement runs: a program that names a method that
	// does not exist fails before any call is made.
	msg, err := check(passCtx, prog, p.Globals, host)
	switch {
	case errors.Is(err, sandbox.ErrStop):
		return sandbox.Outcome{Status: sandbox.Stopped, Stop: err, Clock: p.Clock}, nil
	case err != nil && passCtx.Err() != nil:
		return failed(EndMessage(passCtx, limits.Timeout)), nil
	case err != nil:
		return sandbox.Outcome{}, fmt.Errorf("sandbox: check before running: %w", err)
	case msg != "":
		o := failed(msg)
		o.Clock = p.Clock
		return o, nil
	}
	hostCtx, cancelHost := context.WithCancelCause(passCtx)
	defer cancelHost(nil)

	ps := &pass{
		ctx:        passCtx,
		hostCtx:    hostCtx,
		cancelHost: cancelHost,
		host:       host,
		prog:       prog,
		globals:    p.Globals,
		services:   p.Services,
		limits:     limits,
		log:        log,
		loop:       eventloop.NewEventLoop(eventloop.EnableConsole(false)),
		cache:      cache,
		clock:      newClockState(p.Clock),
		sources:    map[string]loaded{prog.File: {norm: prog}},
		logs:       logState{max: limits.MaxLogBytes},
		timers:     map[int64]func(){},
	}
	ps.jobs.start, ps.jobs.over = ps.startJob, ps.isDone
	ps.loop.RunOnLoop(func(vm *goja.Runtime) { ps.turn(func() { ps.start(vm) }) })

	afterDone := make(chan struct{})
	stopAfter := context.AfterFunc(passCtx, func() {
		defer close(afterDone)
		ps.abort(failed(EndMessage(passCtx, limits.Timeout)))
	})
	loopPanicked := ps.runLoop()
	ps.jobs.stop()
	ps.hostWG.Wait()
	if !stopAfter() {
		<-afterDone
	}
	if !loopPanicked {
		// Cancels the timers still pending and waits for their goroutines.
		// A loop that panicked (a bug: every job runs under guard) still
		// counts as running and cannot be terminated; a timer of its that
		// fires later stays blocked, which is logged with the panic.
		ps.loop.Terminate()
	}
	return ps.outcome()
}

// runLoop runs the event loop on this goroutine (it is the VM goroutine)
// until it stops. A panic of the loop itself is an internal failure.
func (ps *pass) runLoop() (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			ps.internalFail(fmt.Errorf("sandbox: event loop panic: %v\n%s", r, debug.Stack()))
		}
	}()
	ps.loop.StartInForeground()
	return false
}

// CodeTooLarge is the outcome of a program whose code is past
// Limits.MaxCodeBytes, which runs nowhere: the pool checks it before the
// code crosses a pipe.
func CodeTooLarge(p sandbox.Program) (o sandbox.Outcome, tooLarge bool) {
	limit := p.Limits.WithDefaults().MaxCodeBytes
	if len(p.Code) <= limit {
		return sandbox.Outcome{}, false
	}
	return sandbox.Outcome{
		Status: sandbox.Failed,
		Error:  fmt.Sprintf("code is too large: %d bytes, limit %d", len(p.Code), limit),
		Clock:  p.Clock,
	}, true
}

// EndMessage is the outcome's error of a pass, or a run, whose context
// ctx has ended: a limit's message, the timeout's, or a cancellation with
// its cause.
func EndMessage(ctx context.Context, timeout time.Duration) string {
	cause := context.Cause(ctx)
	var le *LimitError
	switch {
	case errors.As(cause, &le):
		return le.Msg
	case errors.Is(cause, errTimedOut):
		return TimeoutMessage(timeout)
	case errors.Is(cause, context.Canceled):
		return "canceled"
	default:
		return "canceled: " + cause.Error()
	}
}

// TimeoutMessage is the error of a pass that ran past its Limits.Timeout:
// whole seconds print as "60s", shorter spans as time.Duration does.
func TimeoutMessage(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("timed out after %ds", d/time.Second)
	}
	return "timed out after " + d.String()
}

func failed(msg string) sandbox.Outcome { return sandbox.Outcome{Status: sandbox.Failed, Error: msg} }

// start installs the globals and runs the program; it is the loop's first
// job.
func (ps *pass) start(vm *goja.Runtime) {
	ps.mu.Lock()
	ps.vmRef = vm
	done := ps.done.Load()
	ps.mu.Unlock()
	if done {
		ps.loop.StopNoWait()
		return
	}
	if err := ps.setup(vm); err != nil {
		ps.internalFail(err)
		return
	}
	if res, ok := ps.run(ps.prog, goja.Undefined()); ok {
		ps.steps.cur = nil // its microtasks may have left it unknown (stepContext.Exited)
		_, err := ps.h.then(goja.Undefined(), res, vm.ToValue(ps.onValue), vm.ToValue(ps.onRejected))
		ps.jsErr(err)
	}
}

// run runs a normalised program or snippet with input and returns its
// promise; ok is false when it failed (which has been handled).
func (ps *pass) run(norm *source.Normalized, input goja.Value) (promise goja.Value, ok bool) {
	fnv, err := ps.vm.RunProgram(norm.Compiled())
	if err != nil {
		ps.jsErr(err)
		return nil, false
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		ps.internalFail(fmt.Errorf("sandbox: normalised %s is not a function", norm.File))
		return nil, false
	}
	promise, err = fn(goja.Undefined(), input)
	if err != nil {
		ps.jsErr(err)
		return nil, false
	}
	return promise, true
}

// setup configures the runtime and installs the sandbox's globals.
func (ps *pass) setup(vm *goja.Runtime) error {
	ps.vm = vm
	ps.clock.steps, ps.clock.max = &ps.steps, ps.limits.MaxClockReads
	ps.clock.over = func(n int) {
		ps.end(failed(fmt.Sprintf("too many clock readings: the program read the clock (Date.now(), new Date()) more than %d times in one pass, and every reading is kept so that the run replays; use codemode.step for code that measures time, and await new Promise(r => setTimeout(r, ms)) to wait instead of a busy loop", n)))
	}
	vm.SetAsyncContextTracker(&ps.steps)
	vm.SetTimeSource(ps.clock.Now)
	vm.SetRandSource(ps.clock.Random)
	vm.SetMaxCallStackSize(ps.limits.MaxStackDepth)
	vm.SetPromiseRejectionTracker(ps.rejections.track)
	// eval and Function must not read source maps named in the code from
	// the file system.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	g := vm.GlobalObject()
	// The event loop installs a CommonJS require and Node's timers; the
	// sandbox has no modules, and its own timers (see timers.go).
	for _, name := range []string{"require", "setImmediate", "clearImmediate"} {
		if err := g.Delete(name); err != nil {
			return fmt.Errorf("sandbox: remove %s: %w", name, err)
		}
	}
	h, err := installHelpers(vm)
	if err != nil {
		return err
	}
	ps.h = h
	for _, install := range []func(*goja.Object) error{ps.installConsole, ps.installTimers, ps.installCodemode, ps.installConnectors} {
		if err := install(g); err != nil {
			return err
		}
	}
	return nil
}

// setFuncs sets the functions fns on obj, made by native; prefix names obj
// in an error.
func setFuncs(vm *goja.Runtime, obj *goja.Object, prefix string, fns map[string]func(goja.FunctionCall) goja.Value) error {
	for name, fn := range fns {
		if err := obj.Set(name, native(vm, name, fn)); err != nil {
			return fmt.Errorf("sandbox: install %s%s: %w", prefix, name, err)
		}
	}
	return nil
}

// native returns fn as a JavaScript function named name. goja names a Go
// function by its Go symbol (github.com/…/pass.(*pass).setTimer.func1),
// which the function's name and toString() would show a program: the
// build's module paths, and confusing. A host function looks like any
// built-in: "function setTimeout() { [native code] }".
func native(vm *goja.Runtime, name string, fn func(goja.FunctionCall) goja.Value) goja.Value {
	f := vm.ToValue(fn).(*goja.Object)
	// As a built-in's: not writable, not enumerable, configurable.
	_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return f
}

// valueJSON converts v to JSON with the VM's own helper. A value that cannot
// be converted returns what the conversion threw; an uncatchable error (an
// interrupt) panics on so the VM unwinds.
func (ps *pass) valueJSON(v goja.Value) (json.RawMessage, goja.Value) {
	s, err := ps.h.result(goja.Undefined(), v)
	if err != nil {
		var ex *goja.Exception
		if isUncatchable(err) || !errors.As(err, &ex) {
			panic(err)
		}
		return nil, ex.Value()
	}
	return json.RawMessage(s.String()), nil
}

// onValue receives the program's value.
func (ps *pass) onValue(call goja.FunctionCall) goja.Value {
	if ps.isDone() {
		return goja.Undefined()
	}
	raw, thrown := ps.valueJSON(call.Argument(0))
	if thrown != nil {
		msg, _ := ps.describeValue(thrown)
		ps.end(failed("the program's value cannot be converted to JSON: " + msg))
		return goja.Undefined()
	}
	ps.warnUnhandled()
	ps.end(sandbox.Outcome{Status: sandbox.Completed, Result: raw})
	return goja.Undefined()
}

// onRejected receives the program's failure.
func (ps *pass) onRejected(call goja.FunctionCall) goja.Value {
	if !ps.isDone() {
		ps.end(failed(ps.failure(call.Argument(0), nil)))
	}
	return goja.Undefined()
}

// finish records how the pass ended; the first outcome wins. It reports
// whether o was recorded. Unless the host stopped the pass, the host calls
// still in flight are noted and their context canceled.
func (ps *pass) finish(o sandbox.Outcome) bool {
	ps.mu.Lock()
	if ps.done.Load() {
		ps.mu.Unlock()
		return false
	}
	ps.done.Store(true)
	ps.out = o
	cancel := o.Status != sandbox.Stopped
	if cancel {
		ps.cancelled = maps.Clone(ps.flying)
	}
	ps.mu.Unlock()
	if cancel {
		ps.cancelHost(errProgramEnded)
	}
	return true
}

func (ps *pass) isDone() bool { return ps.done.Load() }

// end records o from the VM goroutine: JavaScript still running or queued
// is interrupted and the loop stops.
func (ps *pass) end(o sandbox.Outcome) {
	if ps.finish(o) {
		ps.vm.Interrupt(errPassOver)
	}
	ps.loop.StopNoWait()
}

// abort records o from any goroutine and stops the VM and the loop.
func (ps *pass) abort(o sandbox.Outcome) {
	if !ps.finish(o) {
		return
	}
	ps.mu.Lock()
	vm := ps.vmRef
	ps.mu.Unlock()
	if vm != nil {
		vm.Interrupt(errPassOver)
	}
	ps.loop.RunOnLoop(func(*goja.Runtime) { ps.loop.StopNoWait() })
}

// internalFail records an internal failure (Run returns it) and ends the
// pass.
func (ps *pass) internalFail(err error) {
	ps.log.Error("sandbox: internal failure", "err", err)
	ps.mu.Lock()
	if ps.internal == nil {
		ps.internal = err
	}
	ps.mu.Unlock()
	ps.abort(failed("internal error"))
}

// guard runs f on the loop, turning a panic into an internal failure.
func (ps *pass) guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			ps.internalFail(fmt.Errorf("sandbox: panic: %v\n%s", r, debug.Stack()))
		}
	}()
	f()
}

// jsErr handles an error returned by a call from Go into JavaScript at the
// top of the VM goroutine: uncatchable errors and exceptions that escaped
// the program end the pass.
func (ps *pass) jsErr(err error) {
	if err == nil || ps.isDone() {
		return
	}
	var so *goja.StackOverflowError
	var ie *goja.InterruptedError
	var ex *goja.Exception
	switch {
	case errors.As(err, &so):
		_, loc := ps.modelFrame(so.Stack())
		ps.end(failed("RangeError: maximum call stack size exceeded" + loc))
	case errors.As(err, &ie):
		ps.internalFail(fmt.Errorf("sandbox: unexpected interrupt: %w", err))
	case errors.As(err, &ex):
		ps.end(failed(ps.failure(ex.Value(), ex.Stack())))
	default:
		ps.internalFail(fmt.Errorf("sandbox: %w", err))
	}
}

func isUncatchable(err error) bool {
	var so *goja.StackOverflowError
	var ie *goja.InterruptedError
	return errors.As(err, &so) || errors.As(err, &ie)
}

// outcome assembles the result once everything has ended.
func (ps *pass) outcome() (sandbox.Outcome, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.internal != nil {
		return sandbox.Outcome{}, ps.internal
	}
	o := ps.out
	if !ps.done.Load() {
		return sandbox.Outcome{}, errors.New("sandbox: pass ended without an outcome")
	}
	if o.Status == sandbox.Completed && len(o.Result) == 0 {
		o.Result = json.RawMessage("null")
	}
	if w := inflightWarning(ps.cancelled, o.Status); w != "" {
		ps.logs.note(w)
	}
	o.Logs = ps.logs.result()
	o.Clock = ps.clock.Clock()
	return o, nil
}
