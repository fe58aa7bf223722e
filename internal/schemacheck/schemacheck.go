// Package schemacheck words JSON Schema validation failures for people and
// models: one line per violated rule, with the JSON pointer of the value.
package schemacheck

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
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
	at := cmp.Or(v.Pointer, "(root)")
	return fmt.Sprintf("at %s: %s", at, v.Message)
}

// Leaves returns the violated rules of a validation error (its causes
// without causes), without repeats, ordered by the value's place (array
// indexes as numbers; rules at one place in the validator's order), and an
// "additional properties" rule names them sorted. The validator walks an
// object's properties in Go map order: without the ordering the same bad
// value would be described differently from one call to the next.
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
		if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			slices.Sort(k.Properties)
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
	slices.SortStableFunc(out, func(a, b Violation) int { return comparePointers(a.Pointer, b.Pointer) })
	return out
}

// comparePointers orders JSON pointers token by token, a token of digits
// by its number ("/list/2" before "/list/10").
func comparePointers(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := as[i], bs[i]
		if jsonref.IsIndex(x) && jsonref.IsIndex(y) && len(x) != len(y) {
			return cmp.Compare(len(x), len(y))
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}
