package typegen

import (
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// A Diagnostic reports something of a schema (or of a connector list) that
// the declarations do not express exactly. The output stays valid
// TypeScript: what is not expressed makes a type wider than its schema (or
// unknown), never wrong syntax.
type Diagnostic struct {
	Connector string // the connector
	Method    string // the method, "" for the connector's shared definitions or the connector itself
	// Part is the schema the keyword is in: "input", "output",
	// "definitions" (the connector's shared definitions) or "" (the
	// connector itself).
	Part string
	// Pointer is the JSON pointer within that schema of the schema object
	// holding the keyword ("" for the root).
	Pointer string
	Keyword string // the keyword concerned ("not", "$ref", …), "" when none
	Message string
}

// String renders the diagnostic on one line:
// "gh.issues_get (input #/properties/q): not cannot be expressed …".
func (d Diagnostic) String() string {
	s := d.Connector
	if d.Method != "" {
		s += "." + d.Method
	}
	if d.Part != "" || d.Pointer != "" {
		s = strings.TrimSpace(s + " (" + strings.TrimSpace(d.Part+" #"+d.Pointer) + ")")
	}
	if s != "" {
		s += ": "
	}
	return s + d.Message
}

// unsupportedKeywords constrain values in ways TypeScript types cannot
// say; the converter ignores them, so the type is wider than the schema.
// Keywords that only constrain values within a type (minLength, pattern,
// maximum, …) are not reported: no TypeScript type could say them either,
// and every schema has them. Sorted: they are reported in this order.
var unsupportedKeywords = []string{
	"$dynamicRef", "$recursiveRef", "contains", "dependencies", "dependentRequired", "dependentSchemas",
	"if", "not", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
}

// unsupported reports the unsupported keywords of schema object m.
func (c *converter) unsupported(d *document, m map[string]any) {
	for _, k := range unsupportedKeywords {
		v, ok := m[k]
		if !ok || (k == "unevaluatedProperties" || k == "unevaluatedItems") && v == true {
			continue // absent, or allows everything: nothing lost
		}
		msg := k + " cannot be expressed in TypeScript; the type is wider than the schema"
		switch k {
		case "if":
			msg = "if/then/else" + msg[len(k):]
		case "$dynamicRef", "$recursiveRef":
			msg = k + " is not followed; the type is wider than the schema"
		}
		c.note(d, k, msg)
	}
}

// note records a diagnostic for the schema being converted.
func (c *converter) note(d *document, keyword, msg string) {
	c.diags = append(c.diags, Diagnostic{
		Connector: c.connector,
		Method:    d.method,
		Part:      d.part,
		Pointer:   c.pointer(),
		Keyword:   keyword,
		Message:   msg,
	})
}

// pointer renders the current position as a JSON pointer.
func (c *converter) pointer() string { return c.base + jsonref.Join(c.at) }

// refNote reports a reference that is not followed.
func (c *converter) refNote(d *document, ref, why string) {
	c.note(d, "$ref", fmt.Sprintf("$ref %s %s; typed unknown", docValue(ref), why))
}
