package typegen

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// containers are the top-level keys that hold reusable schemas: JSON Schema
// 2019+ ($defs), drafts 4-7 (definitions) and OpenAPI (components, whose
// schemas OpenAPI connectors embed in operation schemas).
var containers = []string{"$defs", "definitions", "components"}

// ref converts a $ref. Only local references (starting with '#', a JSON
// pointer into the document) are understood; others, and pointers that do
// not resolve, are unknown. $id and $anchor are not considered.
//
// The reference is read as validation reads it (jsonref.Tokens: percent
// escapes decoded, so "#/%24defs/X" is "#/$defs/X"), and from then on only
// its canonical spelling is used: it finds the same target, in the shared
// definitions too, and names the same type as the plain spelling, so the
// declarations and the validation agree on what an argument is.
func (c *converter) ref(d *document, written string, depth int, stack []string) *tsType {
	if !strings.HasPrefix(written, "#") {
		c.refNote(d, written, "is not local (only references within the document, #/…, are followed)")
		return unknownType()
	}
	ref := canonicalRef(written)
	target, ok := jsonref.Pointer(d.value, ref[1:])
	if !ok && c.shared != nil && inContainer(ref) {
		if t, found := jsonref.Pointer(c.shared.value, ref[1:]); found {
			d, target, ok = c.shared, t, true
		}
	}
	if !ok {
		c.refNote(d, written, "does not resolve to a schema of the document (anchors and $id are not followed)")
		return unknownType()
	}
	if c.named {
		key := c.refKey(d, ref)
		if nt := c.refs[key]; nt != nil {
			return refTo(nt)
		}
		nt := c.define(c.names.unique(defName(c.prefix, ref)), d, target, ref[1:])
		c.refs[key] = nt
		return refTo(nt)
	}
	if slices.Contains(stack, ref) {
		c.refNote(d, written, "refers to a schema that contains it")
		return unknownType()
	}
	// Diagnostics within the target point into it, from its pointer
	// (without '#'); then back to where the reference is.
	base, at := c.base, c.at
	c.base, c.at = ref[1:], nil
	defer func() { c.base, c.at = base, at }()
	return c.convert(d, target, depth+1, append(stack[:len(stack):len(stack)], ref))
}

// define adds a named type to be built from schema, found at pointer of
// document d (named mode).
func (c *converter) define(name string, d *document, schema any, pointer string) *namedType {
	nt := &namedType{name: name, doc: docLines(schema), src: d, schema: schema, method: d.method, part: d.part, pointer: pointer}
	c.defs = append(c.defs, nt)
	c.queue = append(c.queue, nt)
	return nt
}

// root defines the named type for a whole document (a method's Input or
// Output), so that "#" refers to it.
func (c *converter) root(name string, d *document) *namedType {
	nt := c.define(name, d, d.value, "")
	c.refs[c.refKey(d, "#")] = nt
	return nt
}

// drain builds every named type not built yet, including the ones their
// references define.
func (c *converter) drain() {
	for len(c.queue) > 0 {
		nt := c.queue[0]
		c.queue = c.queue[1:]
		c.base, c.at = nt.pointer, nil // diagnostics point into it
		nt.typ = c.convert(nt.src, nt.schema, 0, nil)
		nt.src, nt.schema = nil, nil
	}
}

// refKey identifies what a reference means: references into the definition
// containers of documents whose containers are identical and closed share a
// key (so methods embedding the same components share their types), any
// other reference is private to its document.
func (c *converter) refKey(d *document, ref string) string {
	if d.shared != "" && inContainer(ref) {
		return "s" + d.shared + ref
	}
	return "d" + strconv.Itoa(d.id) + ref
}

// canonicalRef writes a local reference ("#…") as the JSON pointer
// jsonref resolves it to: percent escapes decoded, each token escaped as
// RFC 6901 says. A fragment that is not a pointer is returned as it is
// (it resolves to nothing). A reference without '%' or '~', the usual
// one, is its own canonical spelling, returned without allocating.
func canonicalRef(ref string) string {
	if !strings.ContainsAny(ref, "%~") {
		return ref
	}
	toks, ok := jsonref.Tokens(ref[1:])
	if !ok {
		return ref
	}
	return "#" + jsonref.Join(toks)
}

// inContainer reports whether a local reference, canonical or not, points
// into a definition container.
func inContainer(ref string) bool {
	ref = canonicalRef(ref)
	return slices.ContainsFunc(containers, func(k string) bool { return strings.HasPrefix(ref, "#/"+k+"/") })
}

// sharedKey hashes the definition containers of a root schema when they are
// closed (every local $ref inside them points into a container), or returns
// "" when they are not or there are none.
func sharedKey(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	sub := map[string]any{}
	for _, k := range containers {
		if c, ok := m[k]; ok {
			sub[k] = c
		}
	}
	closed := true
	seenAll := jsonref.Refs(sub, func(ref string) { closed = closed && inContainer(ref) })
	if len(sub) == 0 || !closed || !seenAll {
		return ""
	}
	sum := sha256.Sum256([]byte(compactJSON(sub)))
	return hex.EncodeToString(sum[:])
}

// defName is the type name for a reference target (a canonical
// reference): the prefix and the PascalCase of the pointer's last token
// (#/$defs/entity -> <Prefix>Entity).
func defName(prefix, ref string) string {
	last := jsonref.Unescape(ref[strings.LastIndex(ref, "/")+1:])
	name := pascal(last)
	switch {
	case ref == "#":
		name = "Root"
	case name == "":
		name = "Type"
	}
	return typeIdent(prefix + name)
}
