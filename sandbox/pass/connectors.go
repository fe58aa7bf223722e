package pass

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
)

// connector is one connector global of a pass.
//
// Its object is a Proxy over a target holding one Go function per method.
// Reading a method through the Proxy gives instead a JavaScript function
// made on first use (helpers.method) that serialises the argument itself
// and calls into Go once, which saves a call from Go into JavaScript per
// connector call; making one per method up front would cost every pass
// about a microsecond per method. Both functions do the same. A method the
// program replaced or deleted reads as what the target holds.
type connector struct {
	name    string
	methods []string              // sorted
	m       []connectorFunc       // by method index
	fwd     map[string]goja.Value // methods made for other names (Global.Forward)
}

// connectorFunc is one method of a connector.
type connectorFunc struct {
	native  *goja.Object // the target's function
	wrapped goja.Value   // the JavaScript function, made on first read
	what    string       // "name.method", set on first call
}

// installConnectors installs one object per connector. Each is a Proxy so
// that an unknown method is a function throwing a TypeError that names the
// nearest methods. A connector with a dotted name is installed in
// namespace objects (see namespaces.go).
func (ps *pass) installConnectors(g *goja.Object) error {
	if err := checkGlobalNames(ps.globals); err != nil {
		return err
	}
	spaces := map[string]*namespace{}
	for ci, gl := range ps.globals {
		if gl.Unavailable != "" {
			ps.conns = append(ps.conns, nil) // keeps ps.conns[ci] for ps.globals[ci]
			if strings.Contains(gl.Name, ".") {
				ps.namespaceOf(g, spaces, gl.Name).unavailable(gl.Name, gl.Unavailable)
			}
			continue
		}
		c := &connector{name: gl.Name, methods: gl.Methods, m: make([]connectorFunc, len(gl.Methods))}
		ps.conns = append(ps.conns, c)
		target := ps.vm.NewObject()
		for mi, m := range gl.Methods {
			c.m[mi].native = native(ps.vm, m, func(call goja.FunctionCall) goja.Value {
				return ps.callConnector(c, mi, call.Argument(0), goja.Null())
			}).(*goja.Object)
			if err := target.Set(m, c.m[mi].native); err != nil {
				return fmt.Errorf("sandbox: install %s.%s: %w", gl.Name, m, err)
			}
		}
		proxy := ps.vm.NewProxy(target, &goja.ProxyTrapConfig{
			Get: func(t *goja.Object, prop string, _ goja.Value) goja.Value {
				if v := t.Get(prop); v != nil {
					return ps.method(ci, prop, v)
				}
				if sandbox.NotMethods[prop] {
					return goja.Undefined()
				}
				if gl.Forward {
					return ps.forwardedMethod(c, prop)
				}
				msg := fmt.Sprintf("%s.%s is not a function; %s", c.name, prop, suggestion(prop, c.methods, "methods"))
				return native(ps.vm, prop, func(goja.FunctionCall) goja.Value { panic(ps.vm.NewTypeError(msg)) })
			},
		})
		parent, key := g, gl.Name
		if strings.Contains(gl.Name, ".") {
			ns := ps.namespaceOf(g, spaces, gl.Name)
			ns.members = append(ns.members, leafName(gl.Name))
			parent, key = ns.target, leafName(gl.Name)
		}
		if err := parent.Set(key, proxy); err != nil {
			return fmt.Errorf("sandbox: install %s: %w", gl.Name, err)
		}
	}
	return nil
}

// method returns what reading prop on connector ci gives, v being what its
// target holds: the JavaScript function of a method whose Go function is
// still there, else v. (Methods are looked up by binary search: a method
// list that is not sorted, against Global's contract, only loses the
// JavaScript functions.)
func (ps *pass) method(ci int, prop string, v goja.Value) goja.Value {
	c := ps.conns[ci]
	mi := sort.SearchStrings(c.methods, prop)
	if mi == len(c.methods) || c.methods[mi] != prop || v != goja.Value(c.m[mi].native) {
		return v
	}
	if c.m[mi].wrapped == nil {
		if ps.callNative == nil {
			ps.callNative = native(ps.vm, "call", func(call goja.FunctionCall) goja.Value {
				ci, mi := call.Argument(0).ToInteger(), call.Argument(1).ToInteger()
				if ci < 0 || ci >= int64(len(ps.conns)) || ps.conns[ci] == nil || mi < 0 || mi >= int64(len(ps.conns[ci].methods)) {
					panic(ps.vm.NewTypeError("sandbox: no method %d of connector %d", mi, ci))
				}
				return ps.callConnector(ps.conns[ci], int(mi), call.Argument(2), call.Argument(3))
			})
			ps.isObject = native(ps.vm, "isObject", func(call goja.FunctionCall) goja.Value {
				return ps.vm.ToValue(argKind(call.Argument(0)) == "object")
			})
		}
		w, err := ps.h.method(goja.Undefined(), ps.callNative, ps.isObject, ps.vm.ToValue(ci), ps.vm.ToValue(mi))
		if err != nil {
			panic(err)
		}
		c.m[mi].wrapped = w
	}
	return c.m[mi].wrapped
}

// callConnector is the call c.methods[mi](arg). s is arg serialised by the
// caller, or null when it did not serialise it.
func (ps *pass) callConnector(c *connector, mi int, arg, s goja.Value) goja.Value {
	method, f := c.methods[mi], &c.m[mi]
	if f.what == "" {
		f.what = c.name + "." + method
	}
	return ps.callMethod(c, method, f.what, arg, s)
}

// forwardedMethod returns the function a read of prop gives on a
// connector that forwards names it does not list (Global.Forward), made
// once per name.
func (ps *pass) forwardedMethod(c *connector, prop string) goja.Value {
	if f, ok := c.fwd[prop]; ok {
		return f
	}
	if c.fwd == nil {
		c.fwd = map[string]goja.Value{}
	}
	what := c.name + "." + prop
	f := native(ps.vm, prop, func(call goja.FunctionCall) goja.Value {
		return ps.callMethod(c, prop, what, call.Argument(0), goja.Null())
	})
	c.fwd[prop] = f
	return f
}

// callMethod is the call c.method(arg), what being "connector.method". s
// is arg serialised by the caller, or null when it did not serialise it.
func (ps *pass) callMethod(c *connector, method, what string, arg, s goja.Value) goja.Value {
	args := "{}"
	if !goja.IsUndefined(arg) {
		if kind := argKind(arg); kind != "object" {
			panic(ps.vm.NewTypeError("%s.%s expects one object argument, got %s", c.name, method, kind))
		}
		if goja.IsNull(s) {
			var err error
			if s, err = ps.h.args(goja.Undefined(), arg); err != nil {
				panic(err)
			}
		}
		if args = s.String(); !strings.HasPrefix(args, "{") {
			panic(ps.vm.NewTypeError("%s.%s expects one object argument; its JSON form is %s", c.name, method, args))
		}
	}
	seq, ok := ps.admit(what)
	if !ok {
		return ps.pending()
	}
	call := sandbox.Call{Seq: seq, Connector: c.name, Method: method, Args: json.RawMessage(args)}
	site := ps.callSite()
	promise, resolve, reject := ps.vm.NewPromise()
	ps.goHost(seq, what, func() func() {
		raw, err := ps.host.Call(ps.hostCtx, call)
		if err != nil {
			return ps.hostErr(err, reject, site)
		}
		return func() { ps.resolveJSON(raw, resolve, reject) }
	})
	return ps.vm.ToValue(promise)
}
