package pass

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
)

// installCodemode installs the codemode global: step and run, and the
// Program's Services.
func (ps *pass) installCodemode(g *goja.Object) error {
	cm := ps.vm.NewObject()
	fns := map[string]func(goja.FunctionCall) goja.Value{"step": ps.step, "run": ps.runSnippet}
	for _, sv := range ps.services {
		if _, taken := fns[sv.Name]; taken || sv.Name == "" || sv.Name == "__proto__" {
			return fmt.Errorf("sandbox: service %q is empty, reserved or duplicated", sv.Name)
		}
		fns[sv.Name] = ps.service(sv)
	}
	if err := setFuncs(ps.vm, cm, "codemode.", fns); err != nil {
		return err
	}
	return g.Set("codemode", cm)
}

// stringArg returns a string argument, or throws a TypeError naming fn.
// An object is not exported to find out: that would run its getters and
// walk it whole, in Go, where the timeout cannot stop it.
func (ps *pass) stringArg(call goja.FunctionCall, i int, fn, param string) string {
	v := call.Argument(i)
	_, isObject := v.(*goja.Object)
	s, ok := "", false
	if !isObject {
		s, ok = v.Export().(string)
	}
	if !ok {
		panic(ps.vm.NewTypeError("%s: %s must be a string, got %s", fn, param, argKind(call.Argument(i))))
	}
	return s
}

// service is codemode.<sv.Name>: its arguments, checked against sv.Params,
// go to Host.Service as a JSON array, under the next sequence number
// unless it is called inside a step's function; the promise resolves with
// the answer.
func (ps *pass) service(sv sandbox.Service) func(goja.FunctionCall) goja.Value {
	names := make([]string, len(sv.Params))
	for i, p := range sv.Params {
		names[i] = p.Name
	}
	sig := "codemode." + sv.Name + "(" + strings.Join(names, ", ") + ")"
	return func(call goja.FunctionCall) goja.Value {
		args := make([]json.RawMessage, len(sv.Params))
		for i, p := range sv.Params {
			if p.String {
				args[i], _ = json.Marshal(ps.stringArg(call, i, sig, p.Name))
				continue
			}
			raw, thrown := ps.valueJSON(call.Argument(i))
			if thrown != nil {
				msg, _ := ps.describeValue(thrown)
				panic(ps.vm.NewTypeError("%s: %s cannot be converted to JSON: %s", sig, p.Name, msg))
			}
			args[i] = raw
		}
		raw, err := json.Marshal(args)
		if err != nil {
			panic(ps.vm.NewTypeError("%s: %v", sig, err))
		}
		sc := sandbox.ServiceCall{Name: sv.Name, Args: raw}
		if ps.steps.current() == nil {
			seq, ok := ps.admit(sig)
			if !ok {
				return ps.pending()
			}
			sc.Seq = seq
		} else if !ps.count(sig) {
			return ps.pending()
		}
		promise, resolve, reject := ps.vm.NewPromise()
		ps.goHost(0, "", func() func() {
			raw, err := ps.host.Service(ps.hostCtx, sc)
			if err != nil {
				return ps.hostErr(err, reject, nil)
			}
			return func() { ps.resolveJSON(raw, resolve, reject) }
		})
		return ps.vm.ToValue(promise)
	}
}

// step is codemode.step(name, fn): a recorded value is replayed without
// running fn; otherwise fn runs, its value is recorded as JSON and the
// promise resolves with that JSON decoded, so that the first pass and a
// replay see the same value.
func (ps *pass) step(call goja.FunctionCall) goja.Value {
	name := ps.stringArg(call, 0, "codemode.step(name, fn)", "name")
	fn, ok := goja.AssertFunction(call.Argument(1))
	if !ok {
		panic(ps.vm.NewTypeError("codemode.step(name, fn): fn must be a function, got %s", argKind(call.Argument(1))))
	}
	seq, ok := ps.admit("codemode.step(" + name + ")")
	if !ok {
		return ps.pending()
	}
	st := sandbox.Step{Seq: seq, Name: name}
	promise, resolve, reject := ps.vm.NewPromise()
	ps.goHost(st.Seq, stepWhat(st), func() func() {
		val, found, err := ps.host.StepResult(ps.hostCtx, st)
		if err != nil {
			return ps.hostErr(err, reject, nil)
		}
		if found {
			return func() { ps.resolveJSON(val, resolve, reject) }
		}
		return func() { ps.runStep(st, fn, resolve, reject) }
	})
	return ps.vm.ToValue(promise)
}

// stepWhat names a step in the in-flight warning.
func stepWhat(st sandbox.Step) string { return "codemode.step(" + strconv.Quote(st.Name) + ")" }

// runStep runs a step's function on the loop and records its outcome.
func (ps *pass) runStep(st sandbox.Step, fn goja.Callable, resolve, reject func(any) error) {
	ps.steps.started(&st)
	restore := ps.steps.enter(&st)
	defer restore()
	v, err := fn(goja.Undefined())
	ps.steps.cur = &st // fn's microtasks may have left it unknown (Exited)
	if err != nil {
		ps.steps.settled(&st)
		var ex *goja.Exception
		if isUncatchable(err) || !errors.As(err, &ex) {
			ps.jsErr(err)
			return
		}
		ps.stepFailed(st, ex.Value(), "", reject)
		return
	}
	onValue := func(call goja.FunctionCall) goja.Value {
		defer ps.steps.settled(&st) // after the value's toJSON
		if ps.isDone() {
			return goja.Undefined()
		}
		raw, thrown := ps.valueJSON(call.Argument(0))
		if thrown != nil {
			ps.stepFailed(st, thrown, "the step's value cannot be converted to JSON: ", reject)
			return goja.Undefined()
		}
		ps.stepDone(st, raw, "", reject, func() { ps.resolveJSON(raw, resolve, reject) })
		return goja.Undefined()
	}
	onRejected := func(call goja.FunctionCall) goja.Value {
		defer ps.steps.settled(&st) // after the reason's message is read
		if !ps.isDone() {
			ps.stepFailed(st, call.Argument(0), "", reject)
		}
		return goja.Undefined()
	}
	// Still inside the step: a thenable value's then runs in a job goja
	// does not tell the tracker about, when this call returns.
	_, err = ps.h.then(goja.Undefined(), v, ps.vm.ToValue(onValue), ps.vm.ToValue(onRejected))
	ps.jsErr(err)
}

// stepFailed records a step's failure, then rejects with the thrown value.
func (ps *pass) stepFailed(st sandbox.Step, reason goja.Value, prefix string, reject func(any) error) {
	msg, _ := ps.describeValue(reason)
	ps.stepDone(st, nil, prefix+msg, reject, func() { ps.jsErr(reject(reason)) })
}

// stepDone records a step's value, or its failure (errMsg), then runs
// deliver on the loop; a host error rejects instead.
func (ps *pass) stepDone(st sandbox.Step, value json.RawMessage, errMsg string, reject func(any) error, deliver func()) {
	ps.goHost(st.Seq, stepWhat(st), func() func() {
		if err := ps.host.StepDone(ps.hostCtx, st, value, errMsg); err != nil {
			return ps.hostErr(err, reject, nil)
		}
		return deliver
	})
}

// runSnippet is codemode.run(name, input): the snippet's code, normalised
// like a program, runs in this VM with input as its argument; its calls
// continue this pass's sequence numbers.
func (ps *pass) runSnippet(call goja.FunctionCall) goja.Value {
	name := ps.stringArg(call, 0, "codemode.run(name, input)", "name")
	ps.notInStep("codemode.run(" + name + ")")
	input := call.Argument(1)
	if !ps.count("codemode.run(" + name + ")") {
		return ps.pending()
	}
	inputJSON, err := ps.h.result(goja.Undefined(), input)
	if err != nil {
		panic(err)
	}
	nameJSON, _ := json.Marshal(name)
	args := json.RawMessage(`[` + string(nameJSON) + `,` + inputJSON.String() + `]`)
	promise, resolve, reject := ps.vm.NewPromise()
	ps.goHost(0, "", func() func() {
		raw, err := ps.host.Service(ps.hostCtx, sandbox.ServiceCall{Name: sandbox.SnippetService, Args: args})
		if err != nil {
			return ps.hostErr(err, reject, nil)
		}
		var code string
		if err := json.Unmarshal(raw, &code); err != nil {
			return func() { ps.rejectWith(reject, "snippet "+name+": the host did not answer with its source") }
		}
		if len(code) > ps.limits.MaxCodeBytes {
			return func() {
				ps.rejectWith(reject, fmt.Sprintf("snippet %s: code is too large: %d bytes, limit %d", name, len(code), ps.limits.MaxCodeBytes))
			}
		}
		norm, err := ps.cache.Normalize(code, snippetFile(name))
		if err != nil {
			return func() { ps.rejectWith(reject, "snippet "+name+": "+err.Error()) }
		}
		return func() {
			ps.sources[norm.File] = loaded{norm: norm, snippet: name}
			if res, ok := ps.run(norm, input); ok {
				ps.jsErr(resolve(res))
			}
		}
	})
	return ps.vm.ToValue(promise)
}

// snippetFile is the file name of a snippet in stack traces.
func snippetFile(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c == '$' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			b[i] = '_'
		}
	}
	return "snippet:" + string(b)
}
