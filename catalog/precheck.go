package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

var _ sandbox.Checker = (*pass)(nil)

// notMethodNames are what generic code reads on any object; the sandbox
// answers them without a call (see sandbox/connectors.go).
var notMethodNames = map[string]bool{"then": true, "toJSON": true, "catch": true, "finally": true}

// Check is the check before a program runs (sandbox.Checker): every
// static call must name a method of its connector, and an object-literal
// argument must fit the method's input schema. A fully constant argument
// is validated as the call itself will be; one with values known only
// when the program runs is checked for what its text shows: required
// properties it lacks (when it has no spread), properties the schema does
// not allow, and constants of the wrong type or outside an enum. No
// connector is called and nothing is logged.
func (p *pass) Check(ctx context.Context, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	var out []sandbox.Problem
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := p.cat.byName[c.Connector]
		if s == nil || !s.available() || notMethodNames[c.Method] {
			continue // not a connector method (or an unavailable one, which says so when called)
		}
		t := s.byName[c.Method]
		if t == nil && s.src.ForwardUnknown {
			continue // forwarded when called: the server decides
		}
		if t == nil {
			_, err := p.cat.resolve(c.Connector, c.Method)
			out = append(out, sandbox.Problem{Line: c.Line, Col: c.Col, Message: err.Error()})
			continue
		}
		if c.Args != nil {
			out = append(out, t.checkArgs(c, p.r.log)...)
		}
	}
	return out, nil
}

// checkArgs checks an object-literal argument against the tool's input:
// for what its text shows, then, when it is all constants, by validating
// it as the call will be (for the rules the first pass does not judge).
func (t *tool) checkArgs(c sandbox.StaticCall, log interface{ Warn(string, ...any) }) []sandbox.Problem {
	what := c.Connector + "." + c.Method
	lit := c.Args
	var out []sandbox.Problem
	if root, defs := t.checkSchemas(); root != nil {
		ck := &argChecker{what: what, root: root, defs: defs}
		ck.check(lit, root, "", 0)
		out = ck.out
	}
	if lit.Value == nil {
		return out
	}
	sch := t.inputSchema(log)
	if sch == nil {
		return out
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(lit.Value))
	if err != nil {
		return out
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(inst); !errors.As(err, &ve) {
		return out
	}
	for _, v := range schemacheck.Leaves(ve) {
		if structuralKeywords[v.Keyword] {
			continue // judged above, with suggestions, where the schema says it plainly
		}
		at := literalAt(lit, v.Pointer)
		out = append(out, sandbox.Problem{Line: at.Line, Col: at.Col, Message: what + ": " + v.String()})
	}
	return out
}

// structuralKeywords are what argChecker judges; the validation of a
// constant argument adds the others (minLength, pattern, …) and what
// combinations (anyOf, …) hold.
var structuralKeywords = map[string]bool{"required": true, "additionalProperties": true, "type": true, "enum": true, "const": true}

// checkSchemas returns the tool's input schema and its connector's
// definitions, decoded for the check (nil when they do not decode).
func (t *tool) checkSchemas() (root, defs any) {
	t.checkOnce.Do(func() {
		var v any
		if json.Unmarshal(t.def.InputSchema, &v) == nil {
			t.checkRoot = v
		}
	})
	return t.checkRoot, t.src.sharedForCheck()
}

// sharedForCheck returns the source's definitions decoded for the check,
// or nil.
func (s *source) sharedForCheck() any {
	s.checkDefsOnce.Do(func() {
		if len(s.defs) > 0 {
			_ = json.Unmarshal(s.defs, &s.checkDefs)
		}
	})
	return s.checkDefs
}

// literalAt returns the literal at a JSON pointer of lit, or the nearest
// one above it.
func literalAt(lit *sandbox.Literal, ptr string) *sandbox.Literal {
	toks, ok := pointerTokens(ptr)
	if !ok {
		return lit
	}
	cur := lit
	for _, tok := range toks {
		var next *sandbox.Literal
		switch cur.Kind {
		case "object":
			for i := range cur.Props {
				if cur.Props[i].Key == tok {
					next = cur.Props[i].Value
				}
			}
		case "array":
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(cur.Items) {
				next = cur.Items[i]
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// argChecker checks a literal with values known only at run time against
// a schema, for what the text shows.
type argChecker struct {
	what       string
	root, defs any // the input schema and the connector's definitions
	out        []sandbox.Problem
}

// maxCheckDepth bounds the schemas followed ($ref chains, nesting).
const maxCheckDepth = 32

func (ck *argChecker) problem(l *sandbox.Literal, ptr, msg string) {
	at := ptr
	if at == "" {
		at = "(root)"
	}
	ck.out = append(ck.out, sandbox.Problem{Line: l.Line, Col: l.Col, Message: fmt.Sprintf("%s: at %s: %s", ck.what, at, msg)})
}

// resolve follows local $refs (in the input schema, then in the shared
// definitions); nil for a schema it cannot follow.
func (ck *argChecker) resolve(sch any) map[string]any {
	for range maxCheckDepth {
		m, ok := sch.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if !strings.HasPrefix(ref, "#") {
			return nil
		}
		if v, ok := jsonPointer(ck.root, ref[1:]); ok {
			sch = v
			continue
		}
		if ck.defs == nil {
			return nil
		}
		v, ok := jsonPointer(ck.defs, ref[1:])
		if !ok {
			return nil
		}
		sch = v
	}
	return nil
}

// check checks literal l at ptr against schema sch.
func (ck *argChecker) check(l *sandbox.Literal, sch any, ptr string, depth int) {
	m := ck.resolve(sch)
	if m == nil || depth > maxCheckDepth || l == nil {
		return
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if", "$dynamicRef"} {
		if _, ok := m[k]; ok {
			return // a combination: left to the validation of the call
		}
	}
	if l.Kind != "" {
		if types := schemaTypes(m["type"]); len(types) > 0 && !kindFits(l, types) {
			ck.problem(l, ptr, fmt.Sprintf("got %s, want %s", l.Kind, strings.Join(types, " or ")))
			return
		}
	}
	if l.Value != nil {
		if enum, ok := m["enum"].([]any); ok && !inEnum(l.Value, enum) {
			ck.problem(l, ptr, fmt.Sprintf("value must be one of %s", enumList(enum)))
		}
		if c, ok := m["const"]; ok && !inEnum(l.Value, []any{c}) {
			ck.problem(l, ptr, fmt.Sprintf("value must be %s", enumList([]any{c})))
		}
	}
	switch l.Kind {
	case "object":
		ck.object(l, m, ptr, depth)
	case "array":
		if items, ok := m["items"]; ok {
			for i, it := range l.Items {
				ck.check(it, items, ptr+"/"+strconv.Itoa(i), depth+1)
			}
		}
	}
}

func (ck *argChecker) object(l *sandbox.Literal, m map[string]any, ptr string, depth int) {
	props, _ := m["properties"].(map[string]any)
	have := map[string]bool{}
	for _, p := range l.Props {
		have[p.Key] = true
	}
	if req, ok := m["required"].([]any); ok && !l.Open {
		var missing []string
		for _, r := range req {
			if name, ok := r.(string); ok && !have[name] {
				missing = append(missing, strconv.Quote(name))
			}
		}
		if len(missing) > 0 {
			ck.problem(l, ptr, "missing propert"+plural(len(missing), "y", "ies")+" "+strings.Join(missing, ", "))
		}
	}
	closed := m["additionalProperties"] == false && m["patternProperties"] == nil
	var known []string
	for k := range props {
		known = append(known, k)
	}
	for _, p := range l.Props {
		sub, ok := props[p.Key]
		if !ok {
			if closed {
				msg := fmt.Sprintf("additional property %q not allowed", p.Key)
				if near := nearest(p.Key, known, 1); len(near) > 0 {
					msg += fmt.Sprintf("; did you mean %q?", near[0])
				}
				ck.out = append(ck.out, sandbox.Problem{Line: p.Line, Col: p.Col, Message: fmt.Sprintf("%s: at %s: %s", ck.what, orRoot(ptr), msg)})
			}
			continue
		}
		ck.check(p.Value, sub, ptr+"/"+escapePointer(p.Key), depth+1)
	}
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "(root)"
	}
	return ptr
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaTypes returns a schema's "type" as a list.
func schemaTypes(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// kindFits reports whether a literal of a known kind can be one of types.
func kindFits(l *sandbox.Literal, types []string) bool {
	for _, t := range types {
		switch {
		case t == l.Kind:
			return true
		case t == "integer" && l.Kind == "number":
			if l.Value == nil {
				return true
			}
			f, err := strconv.ParseFloat(string(l.Value), 64)
			if err == nil && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

// inEnum reports whether a JSON constant equals one of the values.
func inEnum(v json.RawMessage, enum []any) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return true
	}
	for _, e := range enum {
		if equalJSON(x, e) {
			return true
		}
	}
	return false
}

func equalJSON(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

func enumList(enum []any) string {
	var parts []string
	for i, e := range enum {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("… %d more", len(enum)-10))
			break
		}
		b, _ := json.Marshal(e)
		parts = append(parts, string(b))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
