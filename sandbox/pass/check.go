package pass

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// check runs the static check of a program about to run: its static calls
// of connectors are sent to the host (when it is a Checker); a name used
// as a connector that is not defined but close to a connector's, and a
// method written with '-' as its downstream spells it (X.get-sum, read as
// X.get - sum, when X has get_sum), are reported here. It returns the failure that ends the pass, or "" to run
// the program.
func check(ctx context.Context, prog *source.Normalized, globals []sandbox.Global, host sandbox.Host) (string, error) {
	static, dashed := prog.StaticCalls(), prog.DashedCalls()
	if len(static) == 0 && len(dashed) == 0 {
		return "", nil
	}
	// Calls of available connectors go to the host; names used as
	// connectors that are globals of no kind are compared with theirs. (A
	// call of an unavailable connector says so when it runs.)
	roots, globalRoots := map[string]bool{}, map[string]bool{}
	var names []string
	for _, g := range globals {
		root, _, _ := strings.Cut(g.Name, ".")
		globalRoots[root] = true
		if g.Unavailable == "" && !roots[root] {
			roots[root] = true
			names = append(names, root)
		}
	}
	var calls []sandbox.StaticCall
	var problems []sandbox.Problem
	for _, c := range static {
		root, _, _ := strings.Cut(c.Connector, ".")
		if roots[root] {
			calls = append(calls, c)
		}
	}
	for root, use := range prog.Roots() {
		if globalRoots[root] || isBuiltinGlobal(root) {
			continue
		}
		if near := nearConnector(root, names); near != "" {
			problems = append(problems, sandbox.Problem{Line: use.Line, Col: use.Col, Message: fmt.Sprintf("%s is not defined; did you mean %s?", root, near)})
		}
	}
	for _, d := range dashed {
		if near := dashedMethod(d, globals); near != "" {
			problems = append(problems, sandbox.Problem{Line: d.Line, Col: d.Col, Message: fmt.Sprintf(
				"%[1]s.%[2]s is read as %[1]s.%[3]s; did you mean %[1]s.%[4]s? method names have '-' replaced by '_'",
				d.Connector, d.Method, strings.ReplaceAll(d.Method, "-", " - "), near)})
		}
	}
	if ch, ok := host.(sandbox.Checker); ok && len(calls) > 0 {
		found, err := ch.Check(ctx, calls)
		if err != nil {
			return "", err
		}
		problems = append(problems, found...)
	}
	if len(problems) == 0 {
		return "", nil
	}
	return formatProblems(problems), nil
}

// dashedMethod returns the method d's dashed name stands for, with '_'
// for '-', when d's connector is available and has it; else "".
func dashedMethod(d sandbox.StaticCall, globals []sandbox.Global) string {
	want := strings.ReplaceAll(d.Method, "-", "_")
	for _, g := range globals {
		if g.Name == d.Connector && g.Unavailable == "" {
			if _, ok := slices.BinarySearch(g.Methods, want); ok {
				return want
			}
		}
	}
	return ""
}

// formatProblems words a failed check: every problem, in source order.
func formatProblems(ps []sandbox.Problem) string {
	slices.SortStableFunc(ps, func(a, b sandbox.Problem) int { return cmp.Or(a.Line-b.Line, a.Col-b.Col) })
	var b strings.Builder
	if len(ps) == 1 {
		b.WriteString("the program was checked before running and has a problem; nothing was run:")
	} else {
		fmt.Fprintf(&b, "the program was checked before running and has %d problems; nothing was run:", len(ps))
	}
	for _, p := range ps {
		b.WriteString("\n- ")
		if p.Line > 0 {
			fmt.Fprintf(&b, "line %d:%d: ", p.Line, p.Col)
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// nearConnector returns the connector name root is a likely misspelling
// of (one or two edits away, or equal but for case), or "".
func nearConnector(root string, names []string) string {
	if len(root) < 4 {
		return ""
	}
	best, bestD := "", 3
	for _, n := range names {
		d := textdist.Distance(strings.ToLower(root), strings.ToLower(n))
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// builtinGlobals are the names a fresh goja runtime defines, plus the
// sandbox's own globals.
var builtinGlobals = sync.OnceValue(func() map[string]bool {
	vm := goja.New()
	names, _ := vm.RunString("Object.getOwnPropertyNames(globalThis)")
	out := map[string]bool{"console": true, "codemode": true, "setTimeout": true, "clearTimeout": true, "setInterval": true, "clearInterval": true, "input": true}
	if obj, ok := names.Export().([]any); ok {
		for _, n := range obj {
			if s, ok := n.(string); ok {
				out[s] = true
			}
		}
	}
	return out
})

func isBuiltinGlobal(name string) bool { return builtinGlobals()[name] }
