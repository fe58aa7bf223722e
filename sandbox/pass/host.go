package pass

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
)

// admit takes the next sequence number for a connector call or a step. It
// is false when the pass is over (or stopped), or when the call is past
// Limits.MaxCalls (the pass then fails).
func (ps *pass) admit(what string) (int, bool) {
	ps.notInStep(what)
	if !ps.count(what) {
		return 0, false
	}
	ps.seq++
	return ps.seq, true
}

// count counts a host request against Limits.MaxCalls: the numbered ones
// (admit) and those that take no sequence number, a service inside a
// step and a snippet's lookup, which would otherwise be unbounded (and a
// worker's parent, which bounds the requests it serves, would take the
// worker for a broken one). It is false when the pass is over or the
// request is past the limit (the pass then fails).
func (ps *pass) count(what string) bool {
	if ps.isDone() {
		return false
	}
	if ps.requests >= ps.limits.MaxCalls {
		ps.end(failed(fmt.Sprintf("call limit exceeded: a run may make at most %d connector calls and steps; %s would be call %d", ps.limits.MaxCalls, what, ps.requests+1)))
		return false
	}
	ps.requests++
	return true
}

// notInStep throws a TypeError when what is called inside a step's
// function.
func (ps *pass) notInStep(what string) {
	if st := ps.steps.current(); st != nil {
		panic(ps.vm.NewTypeError("%s cannot be called inside codemode.step(%q): a step's value is replayed without running it again, so its calls would be lost; make the call outside the step", what, st.Name))
	}
}

// pending is a promise that never settles, returned to a program whose pass
// is ending (it is interrupted before it could wait on it).
func (ps *pass) pending() goja.Value {
	p, _, _ := ps.vm.NewPromise()
	return ps.vm.ToValue(p)
}

// hostErr handles a host error: ErrStop stops the pass (and nil is
// returned); any other error becomes a loop callback rejecting the promise
// with an Error carrying the error's text. For a connector call made at
// site (see callSite; nil for the others) the Error's stack names it, so
// the outcome says where the failed call was made in the model's code.
func (ps *pass) hostErr(err error, reject func(any) error, site *goja.StackFrame) func() {
	if errors.Is(err, sandbox.ErrStop) {
		ps.abort(sandbox.Outcome{Status: sandbox.Stopped, Stop: err})
		return nil
	}
	var details json.RawMessage
	if ce := (*sandbox.CallError)(nil); errors.As(err, &ce) {
		details = ce.Details
	}
	return func() { ps.rejectAt(reject, err.Error(), site, details) }
}

func (ps *pass) rejectWith(reject func(any) error, msg string) { ps.rejectAt(reject, msg, nil, nil) }

// rejectAt rejects with a new Error of msg whose stack, when site is
// known, is that frame of the model's code, and which has the members of
// details (a JSON object; see CallError) as properties.
func (ps *pass) rejectAt(reject func(any) error, msg string, site *goja.StackFrame, details json.RawMessage) {
	e, err := ps.h.newError(goja.Undefined(), ps.vm.ToValue(msg))
	if err != nil {
		ps.jsErr(err)
		return
	}
	obj, ok := e.(*goja.Object)
	if ok && site != nil {
		var b bytes.Buffer
		b.WriteString("Error: ")
		b.WriteString(msg)
		b.WriteString("\n\tat ")
		site.Write(&b)
		_ = obj.Set("stack", b.String())
	}
	if ok && len(details) > 0 {
		if v, vok := jsonValue(ps.vm, details); vok {
			if d, dok := v.(*goja.Object); dok && d.ClassName() == "Object" {
				for _, k := range d.Keys() {
					if obj.Get(k) == nil {
						_ = obj.Set(k, d.Get(k))
					}
				}
			}
		}
	}
	ps.jsErr(reject(e))
}

// callSite returns the innermost frame of the model's code (program or
// snippet) on the VM's stack now, or nil: where a host call is made, for
// its error, which arrives after that stack is gone.
func (ps *pass) callSite() *goja.StackFrame {
	ps.frames = ps.vm.CaptureCallStack(callSiteDepth, ps.frames[:0])
	if i, _ := ps.modelFrame(ps.frames); i >= 0 {
		f := ps.frames[i]
		return &f
	}
	return nil
}

// callSiteDepth is how many frames callSite looks at: the connector
// method's wrapper, then the model's code.
const callSiteDepth = 4

// resolveJSON resolves with raw decoded as the VM's JSON.parse decodes it,
// so the program gets plain objects (empty raw is undefined). The value is
// built in Go (jsonValue); JSON.parse itself runs only for text jsonValue
// leaves to it, such as invalid JSON, whose error it reports.
func (ps *pass) resolveJSON(raw json.RawMessage, resolve, reject func(any) error) {
	if len(raw) == 0 {
		ps.jsErr(resolve(goja.Undefined()))
		return
	}
	if v, ok := jsonValue(ps.vm, raw); ok {
		ps.jsErr(resolve(v))
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
