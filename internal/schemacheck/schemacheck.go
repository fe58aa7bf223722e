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

// Leaves returns the violated rules of a validation error, depth first,
// without repeats.
func Leaves(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	seen := map[Violation]bool{}
	for _, leaf := range leaves(ve) {
		u := leaf.BasicOutput()
		if u.Error == nil {
			continue
		}
		v := Violation{Pointer: u.InstanceLocation, Message: u.Error.String()}
		if leaf.ErrorKind != nil {
			if kp := leaf.ErrorKind.KeywordPath(); len(kp) > 0 {
				v.Keyword = kp[len(kp)-1]
			}
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// leaves returns the validation errors without causes, depth first.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}
