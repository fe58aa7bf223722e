package sandbox

import (
	"fmt"
	"sync"

	"github.com/dop251/goja"
)

// helpersSource evaluates to the JavaScript helpers a pass uses. They
// capture the built-ins before the model's code runs, so a program that
// overwrites JSON or Promise does not break the host plumbing. None of them
// is reachable from the program.
const helpersSource = `(function () {
"use strict";
const stringify = JSON.stringify, parse = JSON.parse, P = Promise, E = Error;
const includes = Function.prototype.call.bind(Array.prototype.includes);
function errString(e) {
	try { return String(e); } catch (_) {}
	try { return String(e.name) + ": " + String(e.message); } catch (_) { return "Error"; }
}
// json is JSON.stringify for console output: cycles print as "[Circular]",
// BigInts as 12n, Errors as "Name: message".
function json(v) {
	const stack = [];
	return stringify(v, function (k, val) {
		if (typeof val === "bigint") return val.toString() + "n";
		if (val instanceof E) return errString(val);
		if (typeof val === "object" && val !== null) {
			while (stack.length > 0 && stack[stack.length - 1] !== this) stack.pop();
			if (includes(stack, val)) return "[Circular]";
			stack.push(val);
		}
		return val;
	});
}
function fmt(v) {
	switch (typeof v) {
	case "string": return v;
	case "undefined": return "undefined";
	case "function": return v.name ? "[Function: " + v.name + "]" : "[Function (anonymous)]";
	case "symbol": return v.toString();
	case "bigint": return v.toString() + "n";
	case "object":
		if (v === null) return "null";
		if (v instanceof E) return errString(v);
		try {
			const s = json(v);
			if (s !== undefined) return s;
		} catch (_) {}
		try { return String(v); } catch (_) { return "[object]"; }
	}
	return String(v);
}
return {
	format(...args) {
		let out = "";
		for (let i = 0; i < args.length; i++) {
			if (i > 0) out += " ";
			out += fmt(args[i]);
		}
		return out;
	},
	// result serialises a program or step value; undefined and functions are null.
	result(v) {
		const s = stringify(v);
		return s === undefined ? "null" : s;
	},
	// args serialises a connector call's argument.
	args(v) { return stringify(v); },
	parse(s) { return parse(s); },
	then(v, ok, fail) { P.resolve(v).then(ok, fail); },
	isError(e) { return e instanceof E; },
	// describe returns [message, stack] for a thrown value.
	describe(e) {
		if (e instanceof E) {
			let stack = "";
			try { if (typeof e.stack === "string") stack = e.stack; } catch (_) {}
			return [errString(e), stack];
		}
		if (typeof e === "string") return ["Uncaught " + stringify(e), ""];
		return ["Uncaught " + fmt(e), ""];
	},
	newError(msg) { return new E(msg); },
};
})()`

var helpersProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("codemode-helpers.js", helpersSource, true)
})

// helpers are the callables of helpersSource in one runtime.
type helpers struct {
	format, result, args, parse, then, isError, describe, newError goja.Callable
}

func installHelpers(vm *goja.Runtime) (*helpers, error) {
	prg, err := helpersProgram()
	if err != nil {
		return nil, fmt.Errorf("sandbox: compile helpers: %w", err)
	}
	v, err := vm.RunProgram(prg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run helpers: %w", err)
	}
	obj := v.ToObject(vm)
	h := &helpers{}
	for name, dst := range map[string]*goja.Callable{
		"format": &h.format, "result": &h.result, "args": &h.args, "parse": &h.parse,
		"then": &h.then, "isError": &h.isError, "describe": &h.describe, "newError": &h.newError,
	} {
		fn, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return nil, fmt.Errorf("sandbox: helper %s is not a function", name)
		}
		*dst = fn
	}
	return h, nil
}
