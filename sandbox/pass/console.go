package pass

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// logState captures console output up to a byte budget. Whole lines past
// the budget are dropped and counted; a final marker says how many. Notes
// of the sandbox's own (warnings) come after, outside the budget.
type logState struct {
	max     int
	bytes   int
	lines   []string
	dropped int
	notes   []string
}

// maxNoteBytes bounds a line of the sandbox's own: what it quotes comes
// from the program (an error's message, a step's name) and is not
// counted against the console's budget.
const maxNoteBytes = 4 << 10

// note adds a line of the sandbox's own, clipped to maxNoteBytes.
func (l *logState) note(line string) { l.notes = append(l.notes, short.Clip(line, maxNoteBytes)) }

func (l *logState) full() bool { return l.dropped > 0 }

func (l *logState) add(line string) {
	if l.dropped > 0 || l.bytes+len(line) > l.max {
		l.dropped++
		return
	}
	l.bytes += len(line)
	l.lines = append(l.lines, line)
}

func (l *logState) result() []string {
	out := l.lines
	if l.dropped > 0 {
		out = append(out[:len(out):len(out)], fmt.Sprintf("… %d more log lines truncated", l.dropped))
	}
	if len(l.notes) > 0 {
		out = append(out[:len(out):len(out)], l.notes...)
	}
	return out
}

// installConsole installs console.log/info/debug/warn/error (and dir and
// trace, as log). Arguments are joined by spaces: strings as they are,
// objects and arrays as JSON (cycles as "[Circular]"), Errors as "Name:
// message". warn and error lines start with "[warn] " and "[error] ".
func (ps *pass) installConsole(g *goja.Object) error {
	c := ps.vm.NewObject()
	log := ps.consoleFunc("")
	if err := setFuncs(ps.vm, c, "console.", map[string]func(goja.FunctionCall) goja.Value{
		"log": log, "info": log, "debug": log, "dir": log, "trace": log,
		"warn": ps.consoleFunc("[warn] "), "error": ps.consoleFunc("[error] "),
	}); err != nil {
		return err
	}
	return g.Set("console", c)
}

func (ps *pass) consoleFunc(prefix string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		if ps.isDone() {
			return goja.Undefined()
		}
		if ps.logs.full() {
			ps.logs.dropped++
			return goja.Undefined()
		}
		s, err := ps.h.format(goja.Undefined(), call.Arguments...)
		if err != nil {
			panic(err)
		}
		ps.logs.add(prefix + s.String())
		return goja.Undefined()
	}
}
