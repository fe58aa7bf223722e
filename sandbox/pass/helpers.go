package pass

import (
	"fmt"
	"sync"

	"github.com/dop251/goja"
)

// helpersSource evaluates to the JavaScript helpers a pass uses. They
// capture the built-ins before the model's code runs, so a program that
// overwrites JSON, Promise, String or Array methods does not break the host
// plumbing. None of them is reachable from the program.
//
// Values that cross to the host (call arguments, step values, the result)
// are serialised by JSON.stringify's rules, except that a toJSON inherited
// from Object.prototype or Array.prototype is ignored: a program that
// defines one changes its own JSON.stringify, not what its calls send.
const helpersSource = `(function () {
"use strict";
const stringify = JSON.stringify, parse = JSON.parse, P = Promise, E = Error, Str = String;
const call = Function.prototype.call;
const then = call.bind(P.prototype.then), resolve = call.bind(P.resolve, P);
// String(symbol) and String(bigint) follow the spec, not the prototypes'
// toString, so they need no captured method (and the Symbol and BigInt
// built-ins are not materialised for every pass). Arrays are handled by
// index for the same reason.
const gopd = Object.getOwnPropertyDescriptor, defineProperty = Object.defineProperty;
const OP = Object.prototype, AP = Array.prototype;
function errString(e) {
	try { return Str(e); } catch (_) {}
	try {
		const name = Str(e.name), msg = Str(e.message);
		return msg === "" ? name : name + ": " + msg;
	} catch (_) { return "Error"; }
}
// isErr is instanceof Error that survives hostile proxies.
function isErr(e) {
	try { return e instanceof E; } catch (_) { return false; }
}
// pristine serialises v with JSON.stringify while Object.prototype and
// Array.prototype have no toJSON of their own.
function pristine(v, replacer) {
	const od = gopd(OP, "toJSON"), ad = gopd(AP, "toJSON");
	const o = od !== undefined && od.configurable, a = ad !== undefined && ad.configurable;
	if (o) delete OP.toJSON;
	if (a) delete AP.toJSON;
	try {
		return stringify(v, replacer);
	} finally {
		if (o) defineProperty(OP, "toJSON", od);
		if (a) defineProperty(AP, "toJSON", ad);
	}
}
// argsJSON is pristine(v) with a short cut for the usual case, prototypes
// without a toJSON of their own.
function argsJSON(v) {
	if (gopd(OP, "toJSON") === undefined && gopd(AP, "toJSON") === undefined) return stringify(v);
	return pristine(v);
}
// json is JSON.stringify for console output: cycles print as "[Circular]",
// BigInts as 12n, Errors as "Name: message".
function json(v) {
	const stack = [];
	let n = 0; // stack[0..n) are the objects being serialised, outermost first
	return stringify(v, function (k, val) {
		if (typeof val === "bigint") return Str(val) + "n";
		if (isErr(val)) return errString(val);
		if (typeof val === "object" && val !== null) {
			while (n > 0 && stack[n - 1] !== this) n--;
			for (let i = 0; i < n; i++) {
				if (stack[i] === val) return "[Circular]";
			}
			stack[n++] = val;
		}
		return val;
	});
}
function fmt(v) {
	switch (typeof v) {
	case "string": return v;
	case "undefined": return "undefined";
	case "function": return v.name ? "[Function: " + v.name + "]" : "[Function (anonymous)]";
	case "symbol": return Str(v);
	case "bigint": return Str(v) + "n";
	case "object":
		if (v === null) return "null";
		if (isErr(v)) return errString(v);
		try {
			const s = json(v);
			if (s !== undefined) return s;
		} catch (_) {}
		try { return Str(v); } catch (_) { return "[object]"; }
	}
	return Str(v);
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
		const s = pristine(v);
		return s === undefined ? "null" : s;
	},
	// args serialises a connector call's argument.
	args(v) { return argsJSON(v); },
	// method returns a connector method that serialises its argument here,
	// in JavaScript, when isObject(arg) (a plain object), and hands the call
	// to call(connector, index, arg, json), json being null when the
	// argument was not serialised.
	method(call, isObject, connector, index) {
		return (arg) => call(connector, index, arg, isObject(arg) ? argsJSON(arg) : null);
	},
	parse(s) { return parse(s); },
	then(v, ok, fail) { then(resolve(v), ok, fail); },
	// describe returns [message, stack] for a thrown value.
	describe(e) {
		if (isErr(e)) {
			let stack = "";
			try { if (typeof e.stack === "string") stack = e.stack; } catch (_) {}
			return [errString(e), stack];
		}
		if (typeof e === "string") return ["Uncaught " + stringify(e), ""];
		try { return ["Uncaught " + fmt(e), ""]; } catch (_) { return ["Uncaught exception", ""]; }
	},
	newError(msg) { return new E(msg); },
};
})()`

var helpersProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("codemode-helpers.js", helpersSource, true)
})

// helpers are the callables of helpersSource in one runtime.
type helpers struct {
	format, result, args, method, parse, then, describe, newError goja.Callable
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
		"format": &h.format, "result": &h.result, "args": &h.args, "method": &h.method, "parse": &h.parse,
		"then": &h.then, "describe": &h.describe, "newError": &h.newError,
	} {
		fn, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return nil, fmt.Errorf("sandbox: helper %s is not a function", name)
		}
		*dst = fn
	}
	return h, nil
}
