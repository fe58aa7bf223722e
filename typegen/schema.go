package typegen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// Limits that keep hostile or accidental inputs from exhausting the stack or
// blowing up the output. Past them the type is unknown.
const (
	maxDepth = 64    // nesting of schemas within one type
	maxNodes = 20000 // schema nodes converted by one Schema call
	// maxLiteral bounds the JSON of one const or enum declared as literal
	// types. A schema's const of megabytes would be declarations of
	// megabytes that tsc and the model read (tsc took 11 s and 570 MB for
	// one of 3.4 MB); GitHub's longest enum is 816 bytes.
	maxLiteral = 8192
)

// Schema returns the TypeScript type expression for a JSON Schema (exported
// for snippet input schemas and tests). Local $refs are inlined; a recursive
// reference becomes unknown, as does anything typegen does not understand.
// Invalid JSON and an empty input give unknown.
func Schema(schema json.RawMessage) string {
	v, err := jsonref.Decode(schema)
	if err != nil {
		return "unknown"
	}
	c := &converter{}
	t := c.convert(&document{value: v}, v, 0, []string{"#"})
	ts, _ := render(normalize(t), false)
	return ts
}

// document is one root schema that $refs resolve against.
type document struct {
	value any
	id    int
	// shared identifies the document's definition containers ($defs,
	// definitions, components) when references into them mean the same
	// thing in every document with the same containers; "" otherwise.
	shared string
	// method and part say where the document is, for diagnostics (see
	// Diagnostic).
	method, part string
}

// converter turns decoded JSON Schema values into type trees.
type converter struct {
	// named is set for declarations: a $ref becomes a named type alias
	// (built once, so recursion and sharing cost nothing). Otherwise refs are
	// inlined with a recursion guard and a node budget.
	named  bool
	prefix string // type-name prefix for named $ref targets
	names  namer
	refs   map[string]*namedType // by refKey
	defs   []*namedType          // every named type, in creation order
	queue  []*namedType          // named types not built yet
	nodes  int                   // nodes converted (inline mode budget)
	nextID int
	// shared is the connector's shared definitions document (named
	// mode), where references into definition containers that a method's
	// own schema lacks resolve.
	shared *document

	// Where the schema being converted is, for diagnostics: base is the
	// JSON pointer (as written) of the schema a conversion started from,
	// at the tokens below it.
	connector  string
	base       string
	at         []string
	diags      []Diagnostic
	overBudget bool // the node budget's diagnostic was given
}

// sub converts the subschema s found at tokens below the current schema.
func (c *converter) sub(d *document, s any, depth int, stack []string, tokens ...string) *tsType {
	n := len(c.at)
	c.at = append(c.at, tokens...)
	t := c.convert(d, s, depth+1, stack)
	c.at = c.at[:n]
	return t
}

// convert converts schema s of document d. stack holds the refs being
// inlined (inline mode only).
func (c *converter) convert(d *document, s any, depth int, stack []string) *tsType {
	if depth > maxDepth {
		c.note(d, "", fmt.Sprintf("schemas nested deeper than %d levels are typed unknown", maxDepth))
		return unknownType()
	}
	if c.spent(d) {
		return unknownType()
	}
	switch v := s.(type) {
	case bool:
		if v {
			return unknownType()
		}
		return neverType()
	case map[string]any:
		return c.schemaObject(d, v, depth, stack)
	}
	return unknownType()
}

// spent counts a node against the budget of inline mode and reports
// whether the budget was spent before it (saying so once).
func (c *converter) spent(d *document) bool {
	if !c.named && c.nodes >= maxNodes {
		if !c.overBudget {
			c.overBudget = true
			c.note(d, "", fmt.Sprintf("the schema expands to more than %d schemas once its references are inlined; the rest is typed unknown", maxNodes))
		}
		return true
	}
	c.nodes++
	return false
}

// schemaObject intersects what the keywords of one schema object say: its
// $ref, its own type, allOf, anyOf and oneOf; nullable adds null.
func (c *converter) schemaObject(d *document, m map[string]any, depth int, stack []string) *tsType {
	c.unsupported(d, m)
	var parts []*tsType
	if ref, ok := m["$ref"].(string); ok {
		parts = append(parts, c.ref(d, ref, depth, stack))
	}
	parts = append(parts, c.core(d, m, depth, stack))
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		list, ok := m[kw].([]any)
		if !ok {
			continue
		}
		set := union()
		if kw == "allOf" {
			set = intersection() // flattened into the one of parts
		}
		for i, s := range list {
			set.items = append(set.items, c.sub(d, s, depth, stack, kw, strconv.Itoa(i)))
		}
		parts = append(parts, set)
	}
	t := parts[0]
	if len(parts) > 1 {
		t = intersection(parts...)
	}
	if m["nullable"] == true || m["x-nullable"] == true {
		t = union(t, text("null"))
	}
	return t
}

// core is the type given by const, enum or type (inferred from the
// object or array keywords when type is absent).
func (c *converter) core(d *document, m map[string]any, depth int, stack []string) *tsType {
	if v, ok := m["const"]; ok {
		if jsonLonger(v, maxLiteral) {
			c.note(d, "const", fmt.Sprintf("the const is longer than %d bytes of JSON; typed as its type only", maxLiteral))
			return valueTypes([]any{v}, fmt.Sprintf("a const longer than %d bytes of JSON: its type only", maxLiteral))
		}
		return c.literal(d, v, depth)
	}
	if vs, ok := m["enum"].([]any); ok {
		if jsonLonger(vs, maxLiteral) {
			c.note(d, "enum", fmt.Sprintf("the enum is longer than %d bytes of JSON; typed as its values' types only", maxLiteral))
			return valueTypes(vs, fmt.Sprintf("an enum of %d values longer than %d bytes of JSON: their types only", len(vs), maxLiteral))
		}
		u := union()
		for _, v := range vs {
			u.items = append(u.items, c.literal(d, v, depth))
		}
		return u
	}
	switch t := m["type"].(type) {
	case string:
		return c.typed(d, m, t, depth, stack)
	case []any:
		u := union()
		for _, name := range t {
			if s, ok := name.(string); ok {
				u.items = append(u.items, c.typed(d, m, s, depth, stack))
			}
		}
		if len(u.items) == 0 {
			return unknownType()
		}
		return u
	case nil:
		switch {
		case hasAny(m, "properties", "additionalProperties", "patternProperties", "required"):
			return c.object(d, m, depth, stack)
		case hasAny(m, "items", "prefixItems", "additionalItems"):
			return c.array(d, m, depth, stack)
		}
	}
	return unknownType()
}

func hasAny(m map[string]any, keys ...string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { _, ok := m[k]; return ok })
}

// typed is the type for one JSON Schema type name.
func (c *converter) typed(d *document, m map[string]any, name string, depth int, stack []string) *tsType {
	switch name {
	case "string":
		return text("string")
	case "number", "integer":
		return text("number")
	case "boolean":
		return text("boolean")
	case "null":
		return text("null")
	case "array":
		return c.array(d, m, depth, stack)
	case "object":
		return c.object(d, m, depth, stack)
	case "any": // draft 3
		return unknownType()
	}
	c.note(d, "type", fmt.Sprintf("type %s is not a JSON Schema type; typed unknown", docValue(name)))
	return unknownType()
}

// object converts properties (sorted), required, additionalProperties and
// patternProperties. Required names without a property schema are unknown.
// With no properties the object is a string-keyed map.
func (c *converter) object(d *document, m map[string]any, depth int, stack []string) *tsType {
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{} // every property named, and whether it is required
	for k := range props {
		required[k] = false
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	t := &tsType{kind: kObject}
	for _, k := range slices.Sorted(maps.Keys(required)) {
		ps, ok := props[k]
		pt := unknownType()
		if ok {
			pt = c.sub(d, ps, depth, stack, "properties", k)
		}
		// Draft 3 marked required properties in the property itself.
		req := required[k]
		if pm, ok := ps.(map[string]any); ok && pm["required"] == true {
			req = true
		}
		if !req && objectMembers[k] {
			// Every object has it, inherited: an argument that leaves it
			// out has Object's, which must fit.
			pt = union(pt, text("Object["+compactJSON(k)+"]"))
		}
		t.props = append(t.props, prop{key: k, optional: !req, typ: pt, doc: docLines(ps)})
	}

	var index []*tsType
	additional, hasAdditional := m["additionalProperties"]
	if hasAdditional && additional != false {
		index = append(index, c.sub(d, additional, depth, stack, "additionalProperties"))
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(pp)) {
			index = append(index, c.sub(d, pp[k], depth, stack, "patternProperties", k))
		}
	}
	switch {
	case len(index) > 0:
		t.index = union(index...)
	case len(t.props) > 0:
	case additional == false:
		t.index = neverType()
	default:
		t.index = unknownType()
	}
	return t
}

// objectMembers are the members of TypeScript's Object interface: the
// type of an optional property of that name must admit the member's, or
// no object literal fits the type (TypeScript compares a property the
// literal leaves out with the inherited one; {} is not a { toString?:
// number }).
var objectMembers = map[string]bool{"constructor": true, "toString": true, "toLocaleString": true, "valueOf": true, "hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true}

// array converts items, prefixItems (2020-12 tuples; items is then the rest)
// and items arrays (draft 4 tuples; additionalItems is the rest).
func (c *converter) array(d *document, m map[string]any, depth int, stack []string) *tsType {
	items, hasItems := m["items"]
	if prefix, ok := m["prefixItems"].([]any); ok {
		return c.tuple(d, "prefixItems", prefix, "items", items, hasItems, depth, stack)
	}
	if list, ok := items.([]any); ok {
		rest, hasRest := m["additionalItems"]
		return c.tuple(d, "items", list, "additionalItems", rest, hasRest, depth, stack)
	}
	switch {
	case !hasItems:
		return arrayOf(unknownType())
	case items == false:
		return &tsType{kind: kTuple}
	}
	return arrayOf(c.sub(d, items, depth, stack, "items"))
}

func (c *converter) tuple(d *document, elemsKw string, elems []any, restKw string, rest any, hasRest bool, depth int, stack []string) *tsType {
	t := &tsType{kind: kTuple}
	for i, e := range elems {
		t.items = append(t.items, c.sub(d, e, depth, stack, elemsKw, strconv.Itoa(i)))
	}
	switch {
	case !hasRest:
		t.elem = unknownType()
	case rest != false:
		t.elem = c.sub(d, rest, depth, stack, restKw)
	}
	return t
}

// jsonLonger reports whether v encodes to more than n bytes of JSON,
// looking no further than it must. Escapes are not counted: what it
// reports longer is.
func jsonLonger(v any, n int) bool { return jsonSize(v, n) > n }

// jsonSize is at least the size of v encoded, counted up to n+1.
func jsonSize(v any, n int) int {
	switch x := v.(type) {
	case nil, bool:
		return 4
	case json.Number:
		return len(x)
	case string:
		return len(x) + 2
	case []any:
		t := 2
		for _, e := range x {
			if t += jsonSize(e, n) + 1; t > n {
				break
			}
		}
		return t
	case map[string]any:
		t := 2
		for k, e := range x {
			if t += len(k) + 4 + jsonSize(e, n); t > n {
				break
			}
		}
		return t
	}
	return 0
}

// valueTypes is the type of values too long to declare as literals: the
// union of their JSON types, in the order they come, with a comment
// saying why.
func valueTypes(vs []any, why string) *tsType {
	var types []string
	for _, v := range vs {
		t := "unknown"
		switch v.(type) {
		case nil:
			t = "null"
		case bool:
			t = "boolean"
		case json.Number:
			t = "number"
		case string:
			t = "string"
		case []any:
			t = "unknown[]"
		case map[string]any:
			t = "{ [key: string]: unknown }"
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	ts := strings.Join(types, " | ")
	if len(types) > 1 {
		ts = "(" + ts + ")"
	}
	return text(ts + " /* " + why + " */")
}

// literal is the TypeScript literal type of a JSON value (const and
// enum): objects become object types and arrays tuples of literals. Each
// value is a node of the budget: an enum of thousands of values, inlined
// by thousands of references, would otherwise make a type of millions.
func (c *converter) literal(d *document, v any, depth int) *tsType {
	if depth > maxDepth || c.spent(d) {
		return unknownType()
	}
	switch x := v.(type) {
	case nil:
		return text("null")
	case bool:
		return text(strconv.FormatBool(x))
	case json.Number:
		return text(x.String())
	case string:
		return text(compactJSON(x))
	case []any:
		t := &tsType{kind: kTuple}
		for _, e := range x {
			t.items = append(t.items, c.literal(d, e, depth+1))
		}
		return t
	case map[string]any:
		t := &tsType{kind: kObject}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			t.props = append(t.props, prop{key: k, typ: c.literal(d, x[k], depth+1)})
		}
		return t
	}
	return unknownType()
}
