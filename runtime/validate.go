package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a JSON Schema with an ECMAScript regex engine (real
// schemas use lookahead) and no loader: remote and file references are
// refused rather than fetched.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.UseRegexpEngine(ecmaRegexp)
	const loc = "codemode-input.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return sch, nil
}

// inputSchema returns the tool's compiled input schema, or nil when it does
// not compile (the tool is then called unvalidated; the source decides).
func (t *tool) inputSchema(log interface{ Warn(string, ...any) }) *jsonschema.Schema {
	t.schemaOnce.Do(func() {
		sch, err := compileSchema(t.def.InputSchema)
		if err != nil {
			log.Warn("input schema does not compile; arguments are passed unvalidated", "connector", t.src.name, "method", t.def.Name, "err", err)
			return
		}
		t.schema = sch
	})
	return t.schema
}

// validateValue checks arguments already decoded (by decodeJSON or
// jsonschema.UnmarshalJSON: numbers as json.Number) against sch and returns
// an error listing every violation with its JSON pointer, or nil.
// what names the value ("arguments for kv.put").
func validateValue(sch *jsonschema.Schema, what string, inst any) error {
	if sch == nil {
		return nil
	}
	err := sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("invalid %s: %w", what, err)
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
	return fmt.Errorf("invalid %s:\n- %s", what, strings.Join(lines, "\n- "))
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

// regexMatchTimeout bounds one pattern match, so a catastrophic pattern in a
// tool's schema cannot stall a call.
const regexMatchTimeout = time.Second

// ecmaRegexp compiles JSON Schema patterns as ECMAScript regexes.
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = regexMatchTimeout
	return (*ecmaRe)(re), nil
}

type ecmaRe regexp2.Regexp

func (re *ecmaRe) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *ecmaRe) String() string { return (*regexp2.Regexp)(re).String() }
