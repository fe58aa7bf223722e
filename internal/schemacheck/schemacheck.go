// Package schemacheck words JSON Schema validation failures for people and
// models: one line per violated rule, with the JSON pointer of the value.
package schemacheck

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Violations returns one line per leaf of a validation error,
// "at /path: message" (the root is "(root)"), without repeats; an error
// that is not a *jsonschema.ValidationError gives its message alone.
func Violations(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var lines []string
	for _, v := range Leaves(ve) {
		lines = append(lines, v.String())
	}
	return lines
}

// Violation is one violated rule: the JSON pointer of the value ("" for
// the root), what is wrong with it, and the keyword violated ("required",
// "type", …; "" when the error does not say).
type Violation struct {
	Pointer string
	Message string
	Keyword string
}

func (v Violation) String() string {
	at := v.Pointer
	if at == "" {
		at = "(root)"
	}
	return fmt.Sprintf("at %s: %s", at, v.Message)
}

// Leaves returns the violated rules of a validation error (its causes
// without causes), depth first, without repeats.
func Leaves(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	seen := map[Violation]bool{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		u := e.BasicOutput()
		if u.Error == nil {
			return
		}
		v := Violation{Pointer: u.InstanceLocation, Message: u.Error.String()}
		if e.ErrorKind != nil {
			if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
				v.Keyword = kp[len(kp)-1]
			}
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	walk(ve)
	return out
}
