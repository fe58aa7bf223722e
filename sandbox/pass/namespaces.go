package pass

import (
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
)

// A connector with a dotted name ("github.issues") is reached through
// namespace objects: github is a global holding issues and every other
// github.* connector. Like a connector, a namespace is a Proxy, so that a
// misspelt member is a TypeError naming the nearest members rather than
// "cannot read property of undefined", and an unavailable member says why.

// namespace is one namespace object of a pass.
type namespace struct {
	path    string       // "github" or "github.pulls"
	target  *goja.Object // holds the members
	members []string     // member names, in order of installation
	why     map[string]string
}

// unavailable records that member name (a dotted connector name) of ns
// could not be installed, and why.
func (ns *namespace) unavailable(name, why string) {
	leaf := leafName(name)
	ns.why[leaf] = why
	ns.members = append(ns.members, leaf)
}

// leafName is the last segment of a dotted name.
func leafName(name string) string {
	return name[strings.LastIndexByte(name, '.')+1:]
}

// namespaceOf returns the namespace that holds connector name directly,
// making it and its parents on first use; spaces are the pass's
// namespaces by path.
func (ps *pass) namespaceOf(g *goja.Object, spaces map[string]*namespace, name string) *namespace {
	path := name[:strings.LastIndexByte(name, '.')]
	if ns := spaces[path]; ns != nil {
		return ns
	}
	ns := &namespace{path: path, target: ps.vm.NewObject(), why: map[string]string{}}
	spaces[path] = ns
	proxy := ps.vm.NewProxy(ns.target, &goja.ProxyTrapConfig{
		Get: func(t *goja.Object, prop string, _ goja.Value) goja.Value {
			if v := t.Get(prop); v != nil {
				return v
			}
			if why, ok := ns.why[prop]; ok {
				panic(ps.vm.NewTypeError("connector %s.%s is unavailable: %s", ns.path, prop, why))
			}
			if sandbox.NotMethods[prop] {
				return goja.Undefined()
			}
			panic(ps.vm.NewTypeError("%s.%s is not a connector; %s", ns.path, prop, suggestion(prop, ns.members, "members")))
		},
	})
	parent, key := g, path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		p := ps.namespaceOf(g, spaces, path)
		p.members = append(p.members, path[i+1:])
		parent, key = p.target, path[i+1:]
	}
	// Set on a fresh object or the global object cannot fail: names were
	// checked by checkGlobalNames.
	_ = parent.Set(key, proxy)
	return ns
}

// checkGlobalNames refuses connector names the sandbox cannot install:
// empty ones or with an empty segment, codemode and console, __proto__,
// duplicates,
// and a name that is also the namespace of another ("a" and "a.b").
func checkGlobalNames(globals []sandbox.Global) error {
	leaves := map[string]bool{}
	spaces := map[string]bool{}
	for _, gl := range globals {
		segs := strings.Split(gl.Name, ".")
		root := segs[0]
		bad := root == "codemode" || root == "console" || leaves[gl.Name] || spaces[gl.Name]
		for i, s := range segs {
			bad = bad || s == "" || s == "__proto__"
			if i > 0 {
				p := strings.Join(segs[:i], ".")
				bad = bad || leaves[p]
				spaces[p] = true
			}
		}
		if bad {
			return fmt.Errorf("sandbox: connector global %q is empty, reserved, duplicated, or clashes with another's namespace", gl.Name)
		}
		leaves[gl.Name] = true
	}
	return nil
}
