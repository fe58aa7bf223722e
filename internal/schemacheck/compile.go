package schemacheck

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

// Compile compiles a JSON Schema decoded by jsonschema.UnmarshalJSON (or
// jsonref.Decode: numbers as json.Number), with an ECMAScript regex engine
// (real schemas use lookahead) and no loader: remote and file references
// are refused rather than fetched.
func Compile(doc any) (*jsonschema.Schema, error) {
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

// CompileJSON decodes a JSON Schema and compiles it (see Compile).
func CompileJSON(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	return Compile(doc)
}

// MustCompileJSON is CompileJSON for a schema written in the code: one that
// does not compile is a programming error, caught by tests.
func MustCompileJSON(raw string) *jsonschema.Schema {
	sch, err := CompileJSON([]byte(raw))
	if err != nil {
		panic("schemacheck: " + err.Error())
	}
	return sch
}

// Validate checks a value already decoded (numbers as json.Number) against
// sch and returns an error listing every violation with its JSON pointer,
// one per line, or nil; what names the value ("arguments for kv.put").
// A nil sch accepts everything (a schema that did not compile).
func Validate(sch *jsonschema.Schema, what string, inst any) error {
	if sch == nil {
		return nil
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("invalid %s:\n- %s", what, strings.Join(Violations(err), "\n- "))
	}
	return nil
}

// Decode validates raw JSON (absent or null: {}) against sch (see
// Validate) and then decodes it into an In, so a value that fits the
// schema is all the In's code has to handle.
func Decode[In any](sch *jsonschema.Schema, what string, raw json.RawMessage) (*In, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid %s:\n- %w", what, err)
	}
	if err := Validate(sch, what, inst); err != nil {
		return nil, err
	}
	in := new(In)
	if err := json.Unmarshal(raw, in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" { // (it fits the schema: a number too large for its field)
			return nil, fmt.Errorf("invalid %s: %q is out of range: %s", what, te.Field, te.Value)
		}
		return nil, fmt.Errorf("invalid %s: %w", what, err)
	}
	return in, nil
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
