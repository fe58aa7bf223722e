package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// Check is the check before a program runs (sandbox.Checker): every
// static call must name a method of its connector, and an object-literal
// argument must fit the method's input schema. A fully constant argument
// is validated as the call itself will be; one with values known only
// when the program runs is checked for what its text shows: required
// properties it lacks (when it has no spread), properties the schema does
// not allow, and constants of the wrong type or outside an enum. No
// connector is called and nothing is logged.
func (cat *Catalog) Check(ctx context.Context, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	var out []sandbox.Problem
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := cat.byName[c.Connector]
		if s == nil || !s.Available() || sandbox.NotMethods[c.Method] {
			continue // not a connector method (or an unavailable one, which says so when called)
		}
		t := s.byName[c.Method]
		if t == nil && s.Source.ForwardUnknown {
			continue // forwarded when called: the server decides
		}
		if t == nil {
			_, err := cat.Resolve(c.Connector, c.Method)
			out = append(out, sandbox.Problem{Line: c.Line, Col: c.Col, Message: err.Error()})
			continue
		}
		if c.Args != nil {
			out = append(out, t.checkArgs(c)...)
		}
	}
	return out, nil
}

// checkArgs checks an object-literal argument against the tool's input:
// for what its text shows, then, when it is all constants, by validating
// it as the call will be (for the rules the first pass does not judge).
func (t *Method) checkArgs(c sandbox.StaticCall) []sandbox.Problem {
	what := c.Connector + "." + c.Method
	lit := c.Args
	var out []sandbox.Problem
	in := t.compiled()
	if in.root != nil {
		ck := &argChecker{what: what, root: in.root}
		ck.check(lit, in.root, "", 0)
		out = ck.out
	}
	if lit.Value == nil || in.schema == nil {
		return out
	}
	inst, err := jsonref.Decode(lit.Value)
	var ve *jsonschema.ValidationError
	if err != nil || !errors.As(schemacheck.Check(in.schema, inst), &ve) {
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

// literalAt returns the literal at a JSON pointer of lit, or the nearest
// one above it.
func literalAt(lit *sandbox.Literal, ptr string) *sandbox.Literal {
	toks, ok := jsonref.Split(ptr)
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
	what  string
	root  any // the input schema, with the shared schemas it refers to
	out   []sandbox.Problem
	enums map[*any]map[enumKey]bool // long enums' values, by the schema's slice (see inEnum)
}

// maxCheckDepth bounds the schemas followed ($ref chains, nesting).
const maxCheckDepth = 32

func (ck *argChecker) problem(line, col int, ptr, msg string) {
	v := schemacheck.Violation{Pointer: ptr, Message: msg}
	ck.out = append(ck.out, sandbox.Problem{Line: line, Col: col, Message: ck.what + ": " + v.String()})
}

// check checks literal l at ptr against schema sch.
func (ck *argChecker) check(l *sandbox.Literal, sch any, ptr string, depth int) {
	m := jsonref.Follow(sch, ck.root)
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
			ck.problem(l.Line, l.Col, ptr, fmt.Sprintf("got %s, want %s", l.Kind, strings.Join(types, " or ")))
			return
		}
	}
	if l.Value != nil {
		if enum, ok := m["enum"].([]any); ok && !ck.inEnum(l.Value, enum) {
			ck.problem(l.Line, l.Col, ptr, fmt.Sprintf("value must be one of %s", enumList(enum)))
		}
		if c, ok := m["const"]; ok && !ck.inEnum(l.Value, []any{c}) {
			ck.problem(l.Line, l.Col, ptr, fmt.Sprintf("value must be %s", enumList([]any{c})))
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
			ck.problem(l.Line, l.Col, ptr, "missing propert"+short.Plural(len(missing), "y", "ies")+" "+strings.Join(missing, ", "))
		}
	}
	closed := m["additionalProperties"] == false && m["patternProperties"] == nil
	known := slices.Collect(maps.Keys(props))
	for _, p := range l.Props {
		sub, ok := props[p.Key]
		if !ok {
			if closed {
				msg := fmt.Sprintf("additional property %q not allowed", p.Key)
				if near := Nearest(p.Key, known, 1); len(near) > 0 {
					msg += fmt.Sprintf("; did you mean %q?", near[0])
				}
				ck.problem(p.Line, p.Col, ptr, msg)
			}
			continue
		}
		ck.check(p.Value, sub, ptr+"/"+jsonref.Escape(p.Key), depth+1)
	}
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

// inEnum reports whether a JSON constant equals one of the values, as
// JSON Schema compares them: numbers by value (1 and 1.0 are equal). A
// long enum is made a set once per check: an array literal of thousands
// of items, each compared with each of thousands of values, took seconds.
func (ck *argChecker) inEnum(v json.RawMessage, enum []any) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return true
	}
	k, ok := keyOf(x)
	switch {
	case !ok: // an array or an object
		return slices.ContainsFunc(enum, func(e any) bool { return sameJSON(x, e) })
	case len(enum) <= minEnumSet:
		return slices.ContainsFunc(enum, func(e any) bool { ek, ok := keyOf(e); return ok && ek == k })
	}
	set := ck.enums[&enum[0]] // the schema's own slice
	if set == nil {
		set = make(map[enumKey]bool, len(enum))
		for _, e := range enum {
			if ek, ok := keyOf(e); ok {
				set[ek] = true
			}
		}
		if ck.enums == nil {
			ck.enums = map[*any]map[enumKey]bool{}
		}
		ck.enums[&enum[0]] = set
	}
	return set[k]
}

// minEnumSet is the longest enum inEnum scans rather than makes a set.
const minEnumSet = 8

// enumKey is a scalar JSON value, distinct per type and value.
type enumKey struct {
	kind byte // 'z' null, 'b' boolean (f 0 or 1), 'n' number, 's' string
	s    string
	f    float64
}

// keyOf is the key of a decoded scalar: a number, from encoding/json
// (float64) or from the schema (json.Number), as encoding/json decodes it
// to float64; ok is false for an array, an object or a number out of
// float64's range (which encoding/json does not decode either).
func keyOf(v any) (k enumKey, ok bool) {
	switch x := v.(type) {
	case nil:
		return enumKey{kind: 'z'}, true
	case bool:
		if x {
			return enumKey{kind: 'b', f: 1}, true
		}
		return enumKey{kind: 'b'}, true
	case string:
		return enumKey{kind: 's', s: x}, true
	case float64:
		return enumKey{kind: 'n', f: x + 0}, true // +0: -0 equals 0
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return enumKey{kind: 'n', f: f + 0}, err == nil
	}
	return enumKey{}, false
}

// sameJSON reports whether x (decoded by encoding/json) equals the
// schema's value e, decoded as encoding/json decodes.
func sameJSON(x, e any) bool {
	b, err := json.Marshal(e)
	var y any
	return err == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
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
