package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles a JSON Schema decoded by jsonschema.UnmarshalJSON (or
// jsonref.Decode: numbers as json.Number), with an ECMAScript regex engine
// (real schemas use lookahead) and no loader: remote and file references
// are refused rather than fetched. Validate the schema with Validate or
// Check, which bound the time its patterns take (patternBudget), not with
// its own Validate.
func Compile(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	p := &patterns{}
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) { return p.compile(s) })
	// An absolute URL of no file: a relative one would be resolved
	// against the working directory, which errors would then name.
	const loc = "codemode-mcp:///input.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	if p.used.Load() {
		sch.Extensions = append(sch.Extensions, p) // where Check finds it
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
	if err := Check(sch, inst); err != nil {
		return fmt.Errorf("invalid %s:\n- %s", what, strings.Join(Violations(err), "\n- "))
	}
	return nil
}

// Check validates inst against sch as sch.Validate does, within the time
// budget of its patterns: a *jsonschema.ValidationError, nil, or
// errPatternsOutOfTime when its patterns took more than patternBudget in
// all (the value is refused: a match stopped is no answer, and a failed
// match within "not" would let it through). Validations of one schema
// take turns, as the budget is the schema's patterns'; a schema without
// patterns is validated as it is.
func Check(sch *jsonschema.Schema, inst any) error {
	var p *patterns
	for _, e := range sch.Extensions {
		if x, ok := e.(*patterns); ok {
			p = x
		}
	}
	if p == nil {
		return sch.Validate(inst)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline, p.out = time.Now().Add(patternBudget), false
	err := sch.Validate(inst)
	if p.out {
		return errPatternsOutOfTime
	}
	return err
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

// patternBudget bounds the time the patterns of one validation take in
// all: a pattern in a tool's schema that backtracks catastrophically
// would otherwise cost up to its match time-out for every string of the
// arguments, and hold the call (and its run) that long.
const patternBudget = time.Second

var errPatternsOutOfTime = fmt.Errorf("the schema's patterns took more than %s to check the value (one backtracks catastrophically on it); it is refused", patternBudget)

// patterns are the ECMAScript patterns of one compiled schema, and the
// budget of the validation using them (see Check). It is an extension of
// the schema's root, which checks nothing, so that Check finds it.
type patterns struct {
	used atomic.Bool // it compiled a pattern
	mu   sync.Mutex  // held by the validation using the patterns
	// guarded by mu
	deadline time.Time // when the validation's budget ends
	out      bool      // a match ran out of the budget
}

func (*patterns) Validate(*jsonschema.ValidatorContext, any) {}

// compile compiles a JSON Schema pattern as an ECMAScript regex.
func (p *patterns) compile(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	p.used.Store(true)
	return &ecmaRe{re: re, p: p}, nil
}

// ecmaRe is a pattern of a compiled schema; it matches only within Check,
// which holds p.mu.
type ecmaRe struct {
	re *regexp2.Regexp
	p  *patterns
}

// MatchString reports whether s matches, within what is left of the
// validation's budget; past it, or when the match runs out of it, the
// validation is out of time, and this and every later match say no.
func (re *ecmaRe) MatchString(s string) bool {
	p := re.p
	left := time.Until(p.deadline)
	if p.out || left <= 0 {
		p.out = true
		return false
	}
	re.re.MatchTimeout = left
	ok, err := re.re.MatchString(s)
	if err != nil {
		p.out = true
		return false
	}
	return ok
}

func (re *ecmaRe) String() string { return re.re.String() }
