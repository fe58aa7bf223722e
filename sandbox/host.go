package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/dop251/goja"
)

// admit takes the next sequence number for a connector call or a step. It
// is false when the pass is over or stopped, or when the call is past
// Limits.MaxCalls (the pass then fails).
func (ps *pass) admit(what string) (int, bool) {
	ps.notInStep(what)
	if ps.isDone() || ps.stopped.Load() {
		return 0, false
	}
	if ps.seq >= ps.limits.MaxCalls {
		ps.end(failed(fmt.Sprintf("call limit exceeded: a run may make at most %d connector calls and steps; %s would be call %d", ps.limits.MaxCalls, what, ps.seq+1)))
		return 0, false
	}
	ps.seq++
	return ps.seq, true
}

// notInStep throws a TypeError when what is called inside a step's
// function.
func (ps *pass) notInStep(what string) {
	if st := ps.steps.cur; st != nil {
		panic(ps.vm.NewTypeError("%s cannot be called inside codemode.step(%q): a step's value is replayed without running it again, so its calls would be lost; make the call outside the step", what, st.Name))
	}
}

// over reports whether the program must not reach the host any more.
func (ps *pass) over() bool { return ps.isDone() || ps.stopped.Load() }

// pending is a promise that never settles, returned to a program whose pass
// is ending (it is interrupted before it could wait on it).
func (ps *pass) pending() goja.Value {
	p, _, _ := ps.vm.NewPromise()
	return ps.vm.ToValue(p)
}

// goHost runs f on a goroutine of its own; f must not touch the VM. The
// function f returns, if any, then runs on the loop unless the pass is over.
// The host is not called once it has stopped the pass or the program has
// ended. label names a connector call or step (what is empty for the other
// host services): it is in flight until f returns.
func (ps *pass) goHost(label callLabel, f func() func()) {
	id := 0
	if label.what != "" {
		ps.mu.Lock()
		ps.nextHost++
		id = ps.nextHost
		ps.inflight[id] = label
		ps.mu.Unlock()
	}
	// returned takes the call out of flight: before its callback can run.
	returned := func() {
		if id != 0 {
			ps.mu.Lock()
			delete(ps.inflight, id)
			ps.mu.Unlock()
		}
	}
	ps.hostWG.Add(1)
	go func() {
		defer ps.hostWG.Done()
		defer returned()
		defer func() {
			if r := recover(); r != nil {
				ps.internalFail(fmt.Errorf("sandbox: host panic: %v\n%s", r, debug.Stack()))
			}
		}()
		if ps.stopped.Load() || ps.hostCtx.Err() != nil {
			return
		}
		cb := f()
		returned()
		if ps.ctx.Err() != nil {
			// The deadline or a cancellation decides the outcome, not the
			// host's reaction to it.
			ps.abort(failed(deadlineMessage(ps.ctx, ps.limits.Timeout)))
			return
		}
		if cb == nil {
			return
		}
		ps.loop.RunOnLoop(func(*goja.Runtime) {
			if ps.isDone() {
				return
			}
			ps.guard(cb)
		})
	}()
}

// hostErr handles a host error: ErrStop stops the pass (and nil is
// returned); any other error becomes a loop callback rejecting the promise
// with an Error carrying the error's text.
func (ps *pass) hostErr(err error, reject func(any) error) func() {
	if errors.Is(err, ErrStop) {
		ps.stopped.Store(true)
		ps.abort(Outcome{Status: Stopped, Stop: err})
		return nil
	}
	return func() { ps.rejectWith(reject, err.Error()) }
}

func (ps *pass) rejectWith(reject func(any) error, msg string) {
	e, err := ps.h.newError(goja.Undefined(), ps.vm.ToValue(msg))
	if err != nil {
		ps.jsErr(err)
		return
	}
	ps.jsErr(reject(e))
}

// resolveJSON resolves with raw decoded by JSON.parse in the VM, so the
// program gets plain objects (empty raw is undefined).
func (ps *pass) resolveJSON(raw json.RawMessage, resolve, reject func(any) error) {
	if len(raw) == 0 {
		ps.jsErr(resolve(goja.Undefined()))
		return
	}
	v, err := ps.h.parse(goja.Undefined(), ps.vm.ToValue(string(raw)))
	if err != nil {
		if isUncatchable(err) {
			ps.jsErr(err)
			return
		}
		ps.rejectWith(reject, "the host returned invalid JSON: "+err.Error())
		return
	}
	ps.jsErr(resolve(v))
}

// installConnectors installs one object per connector. Each is a Proxy so
// that an unknown method is a function throwing a TypeError that names the
// nearest methods.
func (ps *pass) installConnectors(g *goja.Object) error {
	seen := map[string]bool{"codemode": true, "console": true}
	for _, gl := range ps.globals {
		if gl.Name == "" || seen[gl.Name] {
			return fmt.Errorf("sandbox: connector global %q is empty, reserved or duplicated", gl.Name)
		}
		seen[gl.Name] = true
		target := ps.vm.NewObject()
		for _, m := range gl.Methods {
			if err := target.Set(m, ps.connectorMethod(gl.Name, m)); err != nil {
				return fmt.Errorf("sandbox: install %s.%s: %w", gl.Name, m, err)
			}
		}
		name, methods := gl.Name, gl.Methods
		proxy := ps.vm.NewProxy(target, &goja.ProxyTrapConfig{
			Get: func(t *goja.Object, prop string, _ goja.Value) goja.Value {
				if v := t.Get(prop); v != nil {
					return v
				}
				if notMethods[prop] {
					return goja.Undefined()
				}
				msg := fmt.Sprintf("%s.%s is not a function; %s", name, prop, suggestion(prop, methods, "methods"))
				return ps.vm.ToValue(func(goja.FunctionCall) goja.Value { panic(ps.vm.NewTypeError(msg)) })
			},
		})
		if err := g.Set(gl.Name, proxy); err != nil {
			return fmt.Errorf("sandbox: install %s: %w", gl.Name, err)
		}
	}
	return nil
}

// notMethods are property names that generic code probes on any object
// (await, JSON.stringify, console.log); they read as undefined rather than
// as unknown methods.
var notMethods = map[string]bool{"then": true, "toJSON": true, "catch": true, "finally": true}

// connectorMethod is the function behind connector.method(args).
func (ps *pass) connectorMethod(conn, method string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		args := "{}"
		if arg := call.Argument(0); !goja.IsUndefined(arg) {
			if kind := argKind(arg); kind != "object" {
				panic(ps.vm.NewTypeError("%s.%s expects one object argument, got %s", conn, method, kind))
			}
			s, err := ps.h.args(goja.Undefined(), arg)
			if err != nil {
				panic(err)
			}
			if args = s.String(); !strings.HasPrefix(args, "{") {
				panic(ps.vm.NewTypeError("%s.%s expects one object argument; its JSON form is %s", conn, method, args))
			}
		}
		seq, ok := ps.admit(conn + "." + method)
		if !ok {
			return ps.pending()
		}
		c := Call{Seq: seq, Connector: conn, Method: method, Args: json.RawMessage(args)}
		promise, resolve, reject := ps.vm.NewPromise()
		ps.goHost(callLabel{conn + "." + method, seq}, func() func() {
			raw, err := ps.host.Call(ps.hostCtx, c)
			if err != nil {
				return ps.hostErr(err, reject)
			}
			return func() { ps.resolveJSON(raw, resolve, reject) }
		})
		return ps.vm.ToValue(promise)
	}
}

// argKind names the kind of a value for argument errors; "object" for a
// plain object.
func argKind(v goja.Value) string {
	if goja.IsNull(v) {
		return "null"
	}
	if _, ok := v.(*goja.Symbol); ok {
		return "symbol"
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		switch v.Export().(type) {
		case string:
			return "string"
		case bool:
			return "boolean"
		case int64, float64:
			return "number"
		case nil:
			return "undefined"
		}
		return "bigint"
	}
	if _, ok := goja.AssertFunction(v); ok {
		return "function"
	}
	if obj.ClassName() == "Array" {
		return "array"
	}
	return "object"
}
