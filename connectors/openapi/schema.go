package openapi

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// schemaConv turns the schema objects of an OpenAPI document (OpenAPI 3.0's
// dialect, 3.1's JSON Schema 2020-12, or Swagger 2.0's) into JSON Schema
// 2020-12, which both the argument validator and the declaration generator
// read:
//   - references to shared schemas (#/components/schemas/NAME, or
//     #/definitions/NAME in Swagger 2.0) become #/components/schemas/NAME of
//     the connector's definitions, and the name is recorded; other local
//     references are inlined (a cycle among them becomes {}); references to
//     other files, and references that do not resolve, become {} with a
//     warning;
//   - nullable (and x-nullable) becomes a "null" type or an anyOf with null;
//     boolean exclusiveMinimum/exclusiveMaximum become numbers; type file
//     becomes a binary string; an items array becomes prefixItems;
//   - keywords that do not describe values (example, xml, discriminator,
//     externalDocs, x-…) and keywords of the wrong JSON type are dropped,
//     so a sloppy document still gives schemas that compile.
type schemaConv struct {
	doc *value
	// components holds the shared schemas (components.schemas, or
	// definitions in Swagger 2.0); defsPtr is its pointer with a trailing
	// slash.
	components *value
	defsPtr    string
	// oas31: $ref siblings count (JSON Schema 2020-12); in 3.0 and 2.0
	// they are ignored but for description and nullable.
	oas31 bool
	warn  func(string)
	// stopped reports that the derivation's context is done (deriver's
	// stopped); what is left to convert is then {}.
	stopped func() bool
	// left is how many bytes the derivation may still write (see
	// derive's bound); past it, nothing more is copied in place.
	left int

	// refs collects the shared schema names referenced since the last
	// takeRefs.
	refs map[string]bool
	// refMemo caches hasRef by pointer; places and placeOf name the
	// schemas placeName made shared (pointer -> name, name -> pointer).
	refMemo map[string]bool
	places  map[string]string
	placeOf map[string]string
}

// maxSchemaDepth bounds the nesting of one converted schema.
const maxSchemaDepth = 96

// defsRef is the reference to shared schema name in the connector's
// definitions.
func defsRef(name string) string {
	return "#/components/schemas/" + url.PathEscape(jsonref.Escape(name))
}

// takeRefs returns the shared schema names referenced since the last call,
// sorted, and starts a new set.
func (c *schemaConv) takeRefs() []string {
	out := slices.Sorted(maps.Keys(c.refs))
	clear(c.refs)
	return out
}

// schema appends the JSON Schema for n.
func (c *schemaConv) schema(b []byte, n *value, depth int) []byte {
	if n == nil || depth > maxSchemaDepth || c.stopped() {
		return append(b, "{}"...)
	}
	switch n.kind {
	case kindBool:
		return append(b, n.text...)
	case kindObject:
	default:
		return append(b, "{}"...)
	}
	nullable := n.getBool("nullable", false) || n.getBool("x-nullable", false)
	if ref := n.get("$ref"); ref.isString() {
		return c.refSchema(b, n, ref.text, nullable, depth)
	}
	inner, typed := c.object(nil, n, nullable, depth)
	if nullable && !typed {
		b = append(b, `{"anyOf":[`...)
		b = append(b, inner...)
		return append(b, `,{"type":"null"}]}`...)
	}
	return append(b, inner...)
}

// refSchema converts a schema object with a $ref: the reference, with
// null allowed when the object is nullable, and the object's other
// keywords beside it (in OpenAPI 3.0 and Swagger 2.0, where a $ref's
// siblings are ignored, only its description).
func (c *schemaConv) refSchema(b []byte, n *value, ref string, nullable bool, depth int) []byte {
	var rest []byte
	if c.oas31 {
		rest, _ = c.object(nil, n, false, depth)
	} else if d := n.getText("description"); d != "" {
		var o obj
		o.str("description", d)
		rest = o.done()
	}
	core := c.ref(nil, ref, depth)
	shared := len(core) > 8 && string(core[:8]) == `{"$ref":`
	if nullable {
		core = append(append([]byte(`{"anyOf":[`), core...), `,{"type":"null"}]}`...)
		shared = true
	}
	switch {
	case len(rest) <= 2: // no other keyword
		return append(b, core...)
	case shared: // an object of ours: the other keywords join it
		b = append(b, core[:len(core)-1]...)
		b = append(b, ',')
		return append(b, rest[1:]...)
	}
	b = append(b, `{"allOf":[`...)
	b = append(b, core...)
	b = append(b, ',')
	b = append(b, rest...)
	return append(b, "]}"...)
}

// ref appends the schema a $ref stands for.
func (c *schemaConv) ref(b []byte, ref string, depth int) []byte {
	if !strings.HasPrefix(ref, "#") {
		c.warn(fmt.Sprintf("unresolvable $ref %q: references to other documents are not loaded; its schema is unknown", ref))
		return append(b, "{}"...)
	}
	ptr := ref[1:]
	if name, ok := c.componentName(ptr); ok {
		if c.components.get(name) == nil {
			c.warn(fmt.Sprintf("unresolvable $ref %q: no such schema; its schema is unknown", ref))
			return append(b, "{}"...)
		}
		return c.sharedRef(b, name)
	}
	target := resolvePointer(c.doc, ptr)
	if target == nil {
		c.warn(fmt.Sprintf("unresolvable $ref %q: nothing at that place in the document; its schema is unknown", ref))
		return append(b, "{}"...)
	}
	if !c.hasRef(ptr, target) {
		// A schema without references is copied in place: it cannot
		// recurse, and copying it costs its size once per use, which
		// counts against the derivation's bound.
		if c.left < 0 {
			return append(b, "{}"...)
		}
		start := len(b)
		b = c.schema(b, target, depth+1)
		c.left -= len(b) - start
		return b
	}
	// Anything else (a schema inside another, a parameter's schema that
	// refers to others) becomes a shared schema of its own, named after its
	// place: copying it in place could grow exponentially (Azure's
	// documents refer deep into schemas that refer deep into others).
	return c.sharedRef(b, c.placeName(ptr))
}

// sharedRef appends a reference to shared schema name and records it.
func (c *schemaConv) sharedRef(b []byte, name string) []byte {
	if c.refs == nil {
		c.refs = map[string]bool{}
	}
	c.refs[name] = true
	b = append(b, `{"$ref":`...)
	b = appendString(b, defsRef(name))
	return append(b, '}')
}

// hasRef reports whether the schema at ptr holds a $ref (memoized).
func (c *schemaConv) hasRef(ptr string, n *value) bool {
	if v, ok := c.refMemo[ptr]; ok {
		return v
	}
	if c.refMemo == nil {
		c.refMemo = map[string]bool{}
	}
	v := holdsRef(n, 0)
	c.refMemo[ptr] = v
	return v
}

func holdsRef(n *value, depth int) bool {
	switch {
	case depth > maxSchemaDepth:
		return true
	case n.isObject() || n.isArray():
		for i := range n.items {
			if n.kind == kindObject && n.keys[i] == "$ref" || holdsRef(&n.items[i], depth+1) {
				return true
			}
		}
	}
	return false
}

// placeName is the shared schema name of a schema that is not one of the
// document's shared schemas: its JSON pointer's tokens joined with "." (a
// place inside shared schema X is "X.properties.y"), made unique against
// the shared schemas' names.
func (c *schemaConv) placeName(ptr string) string {
	if name, ok := c.places[ptr]; ok {
		return name
	}
	toks, _ := jsonref.Tokens(ptr)
	if defs, _ := jsonref.Tokens(strings.TrimSuffix(c.defsPtr, "/")); len(toks) > len(defs) && slices.Equal(toks[:len(defs)], defs) {
		toks = toks[len(defs):] // from the schema's name on
	}
	base := strings.Join(toks, ".")
	name := base
	taken := func(n string) bool { _, placed := c.placeOf[n]; return placed || c.components.get(n) != nil }
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s~%d", base, i)
	}
	if c.places == nil {
		c.places, c.placeOf = map[string]string{}, map[string]string{}
	}
	c.places[ptr] = name
	c.placeOf[name] = ptr
	return name
}

// shared returns the schema of shared schema name: one of the document's,
// or one placeName named.
func (c *schemaConv) shared(name string) *value {
	if ptr, ok := c.placeOf[name]; ok {
		return resolvePointer(c.doc, ptr)
	}
	return c.components.get(name)
}

// componentName returns the shared schema name a JSON pointer names
// exactly, if it does.
func (c *schemaConv) componentName(ptr string) (string, bool) {
	if p, err := url.PathUnescape(ptr); err == nil {
		ptr = p
	}
	tok, ok := strings.CutPrefix(ptr, c.defsPtr)
	if !ok || tok == "" || strings.Contains(tok, "/") {
		return "", false
	}
	return jsonref.Unescape(tok), true
}

// jsonTypes are the type names of JSON Schema.
var jsonTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// A keywordKind is what a keyword's value must be for the keyword to be
// kept: a string, a number, a boolean, any value, a schema, a map of
// schemas or a list of them.
type keywordKind uint8

const (
	kwString keywordKind = iota + 1
	kwNumber
	kwBool
	kwValue
	kwSchema
	kwSchemaMap
	kwSchemaList
)

// keywords are the keywords object keeps, by the kind of their value.
var keywords = func() map[string]keywordKind {
	m := map[string]keywordKind{}
	for kind, names := range map[keywordKind]string{
		kwString:     "format title description pattern contentMediaType contentEncoding",
		kwNumber:     "multipleOf maximum minimum maxLength minLength maxItems minItems maxProperties minProperties maxContains minContains",
		kwBool:       "uniqueItems deprecated readOnly writeOnly",
		kwValue:      "default const",
		kwSchema:     "items additionalProperties not contains propertyNames if then else unevaluatedProperties unevaluatedItems",
		kwSchemaMap:  "properties patternProperties dependentSchemas",
		kwSchemaList: "prefixItems allOf anyOf oneOf",
	} {
		for _, n := range strings.Fields(names) {
			m[n] = kind
		}
	}
	return m
}()

// object appends the conversion of a schema object's keywords but $ref.
// typed reports that nullable was expressed in its type (so the caller
// need not wrap it).
func (c *schemaConv) object(b []byte, n *value, nullable bool, depth int) (_ []byte, typed bool) {
	o := obj{b: b}
	for i, k := range n.keys {
		v := &n.items[i]
		switch kw := keywords[k]; {
		case k == "type":
			typed = c.typeKeyword(&o, v, nullable)
		case k == "enum" && v.isArray():
			items := v.items
			if nullable && !slices.ContainsFunc(items, func(e value) bool { return e.kind == kindNull }) {
				items = append(slices.Clip(items), value{})
			}
			o.key(k)
			o.b = value{kind: kindArray, items: items}.appendJSON(o.b)
		case k == "required" && v.isArray():
			if !slices.ContainsFunc(v.items, func(e value) bool { return e.kind != kindString }) {
				o.key(k)
				o.b = v.appendJSON(o.b)
			}
		case k == "exclusiveMinimum" || k == "exclusiveMaximum":
			c.exclusive(&o, n, k, v)
		case (k == "minimum" || k == "maximum") && n.get("exclusive"+strings.ToUpper(k[:1])+k[1:]).isTrue():
			// A boolean exclusive bound of 3.0 and 2.0 takes the value.
		case k == "items" && v.isArray():
			c.schemaList(&o, "prefixItems", v, depth)
		case kw == kwString && v.kind == kindString, kw == kwNumber && v.kind == kindNumber, kw == kwBool && v.kind == kindBool, kw == kwValue:
			o.key(k)
			o.b = v.appendJSON(o.b)
		case kw == kwSchema && (v.kind == kindObject || v.kind == kindBool):
			o.key(k)
			o.b = c.schema(o.b, v, depth+1)
		case kw == kwSchemaMap && v.isObject():
			o.key(k)
			m := obj{b: o.b}
			for j, pk := range v.keys {
				if c.stopped() {
					break
				}
				m.key(pk)
				m.b = c.schema(m.b, &v.items[j], depth+1)
			}
			o.b = m.done()
		case kw == kwSchemaList && v.isArray():
			c.schemaList(&o, k, v, depth)
		}
	}
	// Swagger 2.0's file type is a binary string.
	if t := n.get("type"); t.isString() && t.text == "file" && n.get("format") == nil {
		o.str("format", "binary")
	}
	return o.done(), typed
}

// schemaList appends a keyword whose value is a list of schemas.
func (c *schemaConv) schemaList(o *obj, k string, v *value, depth int) {
	o.key(k)
	o.b = append(o.b, '[')
	for j := range v.items {
		if c.stopped() {
			break
		}
		if j > 0 {
			o.b = append(o.b, ',')
		}
		o.b = c.schema(o.b, &v.items[j], depth+1)
	}
	o.b = append(o.b, ']')
}

// typeKeyword appends type, adding "null" for a nullable schema; it
// reports whether it did.
func (c *schemaConv) typeKeyword(o *obj, v *value, nullable bool) bool {
	names := v.items
	if v.kind != kindArray {
		names = []value{*v}
	}
	keep := make([]string, 0, 2)
	for _, t := range names {
		if t.text == "file" {
			t.text = "string"
		}
		if t.kind == kindString && slices.Contains(jsonTypes, t.text) && !slices.Contains(keep, t.text) {
			keep = append(keep, t.text)
		}
	}
	switch {
	case len(keep) == 0:
		return false
	case nullable && !slices.Contains(keep, "null"):
		keep = append(keep, "null")
	case len(keep) == 1:
		o.str("type", keep[0])
		return nullable
	}
	o.raw("type", marshal(keep))
	return true
}

// exclusive converts exclusiveMinimum or exclusiveMaximum: a number as it
// is (3.1), true as the bound's value (3.0, 2.0), false dropped.
func (c *schemaConv) exclusive(o *obj, n *value, k string, v *value) {
	switch {
	case v.kind == kindNumber:
		o.raw(k, []byte(v.text))
	case v.isTrue():
		if m := n.get(strings.ToLower(k[len("exclusive"):])); m != nil && m.kind == kindNumber {
			o.raw(k, []byte(m.text))
		}
	}
}
