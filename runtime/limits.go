package runtime

import (
	"encoding/json"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// maxValueBytes caps each value the log keeps (a call's arguments or
// result, a step's value, the program's result): a call or step over it
// fails saying so (arguments: before they are logged), a program's result
// is kept cut, and so is the error it throws. Runtime.maxValue holds it (tests lower it).
const maxValueBytes = 1 << 20

// tooLarge returns the message for a value of what (e.g. "the result of
// fx.read") that is n bytes long if that is over the cap, or "" when it
// is within it.
func (r *Runtime) tooLarge(n int, what, verb, advice string) string {
	if n <= r.maxValue {
		return ""
	}
	return fmt.Sprintf("%s %s %s; the execution log keeps at most %s per value — %s",
		what, verb, short.Bytes(int64(n)), short.Bytes(int64(r.maxValue)), advice)
}

// callArgsTooLarge is the message for a call whose arguments are over the
// cap, or "".
func (r *Runtime) callArgsTooLarge(connector, method string, args []byte) string {
	if len(args) <= r.maxValue {
		return "" // without formatting the message: this runs for every call
	}
	return r.tooLarge(len(args), fmt.Sprintf("the arguments of %s.%s", connector, method), "are",
		"pass less, e.g. split the work into several calls")
}

// stepNameTooLarge is the message for a step whose name, which the log
// keeps to know the step again on replay, is over the cap, or "".
func (r *Runtime) stepNameTooLarge(name string) string {
	return r.tooLarge(len(name), "the name of a codemode.step", "is", "name the step briefly")
}

// valueTooLarge is the message for v, the result of call e or the value
// of step e, when it is over the cap, or "".
func (r *Runtime) valueTooLarge(e codemode.Entry, v []byte) string {
	switch {
	case len(v) <= r.maxValue:
		return "" // without formatting the message: this runs for every call
	case e.Kind == codemode.KindStep:
		return r.tooLarge(len(v), "the value of "+describeStep(e.Name), "is", "return less from the step, e.g. only the fields used later")
	}
	return r.tooLarge(len(v), fmt.Sprintf("the result of %s.%s", e.Connector, e.Method), "is", "ask for less, e.g. filter or paginate")
}

// clockTooLarge is the message for a clock whose readings take more than
// the per-value cap in the log (codemode.Clock's compact form), or "".
func (r *Runtime) clockTooLarge(c codemode.Clock) string {
	const maxRunBytes = 48 // one run of readings in the compact form, at most
	if len(c.Times)*maxRunBytes <= r.maxValue {
		return "" // cannot be over: without encoding it
	}
	b, err := json.Marshal(c)
	if err != nil || len(b) <= r.maxValue {
		return ""
	}
	return r.tooLarge(len(b), fmt.Sprintf("too many clock readings: the %d readings of the clock (Date.now(), new Date()), kept so that the run replays,", len(c.Times)), "take",
		"use codemode.step for code that measures time, and await new Promise(r => setTimeout(r, ms)) to wait instead of a busy loop")
}
