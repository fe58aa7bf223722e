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
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		u := leaf.BasicOutput()
		if u.Error == nil {
			continue
		}
		at := u.InstanceLocation
		if at == "" {
			at = "(root)"
		}
		line := fmt.Sprintf("at %s: %s", at, u.Error.String())
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	return lines
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
