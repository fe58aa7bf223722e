package pass

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
)

// describeValue returns the readable message of a thrown value ("Name:
// message" for an Error, `Uncaught "x"` for anything else) and, for an
// Error, its stack as goja prints it.
func (ps *pass) describeValue(v goja.Value) (msg, stack string) {
	res, err := ps.h.describe(goja.Undefined(), v)
	if err != nil {
		if isUncatchable(err) {
			panic(err)
		}
		return "Uncaught exception", ""
	}
	obj, ok := res.(*goja.Object)
	if !ok {
		return "Uncaught exception", ""
	}
	return obj.Get("0").String(), obj.Get("1").String()
}

// failure is the Outcome.Error of a thrown value: its message, where it
// happened in the model's code (from the Error's stack, else from frames),
// and a hint for an unknown global.
func (ps *pass) failure(v goja.Value, frames []goja.StackFrame) string {
	msg, stack := ps.describeValue(v)
	src, line, col, loc := ps.stackLocation(stack)
	if loc == "" {
		_, loc = ps.modelFrame(frames)
	} else if msg == tdzMessage {
		// goja's message does not name the variable; its position does.
		if name := src.norm.NameAt(line, col); name != "" {
			msg = "ReferenceError: Cannot access '" + name + "' before initialization"
		}
	}
	return msg + loc + ps.referenceHint(msg)
}

// tdzMessage is goja's error for a variable read in its temporal dead
// zone (a const, let or class used before its declaration ran).
const tdzMessage = "ReferenceError: Cannot access a variable before initialization"

// modelFrame returns the index of the top frame in the model's code
// (program or snippet) and where it is (" (line L:C)"), or -1 and "".
func (ps *pass) modelFrame(frames []goja.StackFrame) (int, string) {
	for i := range frames {
		p := frames[i].Position()
		if loc := ps.location(frames[i].SrcName(), p.Line, p.Column); loc != "" {
			return i, loc
		}
	}
	return -1, ""
}

// stackFrameRE matches a frame of goja's stack text: "at f (file:3:5(12))"
// or "at file:3:5(12)".
var stackFrameRE = regexp.MustCompile(`([^\s()]+):(\d+):(\d+)\(\d+\)\)?\s*$`)

// stackLocation is modelFrame's location for goja's stack text, with the
// source and position in it that the location words.
func (ps *pass) stackLocation(stack string) (src loaded, line, col int, loc string) {
	for _, line := range strings.Split(stack, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "at ") {
			continue
		}
		m := stackFrameRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		if loc := ps.location(m[1], l, c); loc != "" {
			return ps.sources[m[1]], l, c, loc
		}
	}
	return loaded{}, 0, 0, ""
}

// location maps a position in a compiled file of the pass to the model's
// code: " (line L:C)", " (snippet NAME line L:C)", or "" when the
// position is not in the model's code.
func (ps *pass) location(file string, line, col int) string {
	src, ok := ps.sources[file]
	if !ok {
		return ""
	}
	l, c, ok := src.norm.Position(line, col)
	if !ok {
		return ""
	}
	if src.snippet != "" {
		return fmt.Sprintf(" (snippet %s line %d:%d)", src.snippet, l, c)
	}
	return fmt.Sprintf(" (line %d:%d)", l, c)
}

// referenceHint follows "ReferenceError: x is not defined" with the
// connectors the program can use, nearest first.
func (ps *pass) referenceHint(msg string) string {
	name, ok := strings.CutPrefix(msg, "ReferenceError: ")
	if !ok {
		return ""
	}
	name, ok = strings.CutSuffix(name, " is not defined")
	if !ok || strings.ContainsAny(name, " \n") {
		return ""
	}
	var names []string
	seen := map[string]bool{}
	for _, g := range ps.globals {
		if g.Name == name && g.Unavailable != "" {
			return "; connector " + name + " is unavailable: " + g.Unavailable
		}
		// A namespace object is installed even when its connectors are
		// unavailable.
		root, _, dotted := strings.Cut(g.Name, ".")
		if (g.Unavailable == "" || dotted) && !seen[root] {
			seen[root] = true
			names = append(names, root)
		}
	}
	names = append(textdist.Nearest(name, names, nil), "codemode")
	const show = 20
	if len(names) > show {
		names = append(names[:show:show], "…")
	}
	list := strings.Join(names, ", ")
	for _, n := range names {
		if n != "…" && isClose(name, n) {
			return "; did you mean " + n + "? Available globals: " + list
		}
	}
	return "; available globals: " + list
}
