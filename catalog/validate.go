package catalog

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
)

// CompileSchema compiles a JSON Schema with an ECMAScript regex engine
// (real schemas use lookahead) and no loader: remote and file references
// are refused rather than fetched.
func CompileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	return compileDoc(doc)
}

// compileDoc compiles a decoded schema (see CompileSchema).
func compileDoc(doc any) (*jsonschema.Schema, error) {
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

// compile decodes the method's input schema, adds the connector's shared
// schemas its local references need and it lacks (jsonref.WithShared),
// and compiles it. A schema that does not compile is logged once: the
// method is then called unvalidated (the connector decides).
func (t *Method) compile() compiledInput {
	var sch *jsonschema.Schema
	root, err := jsonref.Decode(t.Def.InputSchema)
	if err != nil {
		root, err = nil, fmt.Errorf("parse schema: %w", err)
	} else {
		root = jsonref.WithShared(root, t.Conn.shared())
		sch, err = compileDoc(root)
	}
	if err != nil {
		t.Conn.log.Warn("input schema does not compile; arguments are passed unvalidated", "connector", t.Conn.Name, "method", t.Def.Name, "err", err)
	}
	return compiledInput{root: root, schema: sch}
}

// InputSchema returns the method's compiled input schema, or nil when it
// does not compile (the method is then called unvalidated).
func (t *Method) InputSchema() *jsonschema.Schema { return t.compiled().schema }

// ValidateValue checks arguments already decoded (by jsonref.Decode or
// jsonschema.UnmarshalJSON: numbers as json.Number) against sch and returns
// an error listing every violation with its JSON pointer, or nil.
// what names the value ("arguments for kv.put").
func ValidateValue(sch *jsonschema.Schema, what string, inst any) error {
	if sch == nil {
		return nil
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("invalid %s:\n- %s", what, strings.Join(schemacheck.Violations(err), "\n- "))
	}
	return nil
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
