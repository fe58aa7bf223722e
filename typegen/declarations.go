package typegen

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Method is one callable method of a connector.
type Method struct {
	Name             string // JS identifier (already sanitized)
	Description      string
	Input            json.RawMessage // JSON Schema of the single argument object (may be nil => {} / object)
	Output           json.RawMessage // JSON Schema of the result (nil => unknown)
	RequiresApproval bool
	Deprecated       bool // JSDoc @deprecated
}

// Connector is one sandbox global.
type Connector struct {
	Name        string // JS identifier
	Description string // optional one-liner
	Methods     []Method
	// Definitions, when set, holds schemas the methods' schemas share: a
	// local $ref into a definition container ("#/components/schemas/X",
	// "#/$defs/X", "#/definitions/X") that does not resolve within a
	// method's own schema resolves here, and becomes one named type for
	// the whole connector.
	Definitions *Definitions
}

// Definitions is a decoded document of shared schemas (see
// Connector.Definitions); decode it once with NewDefinitions and use it
// for every declaration of the connector. It is not changed by use.
type Definitions struct {
	doc *document
}

// NewDefinitions decodes a JSON object holding definition containers. nil
// or empty raw gives nil; raw that is not a JSON object is an error.
func NewDefinitions(raw json.RawMessage) (*Definitions, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	v, err := decode(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("typegen: definitions are not a JSON object")
	}
	return &Definitions{doc: &document{value: v, id: -1}}, nil
}

// approvalNote ends the JSDoc of methods that require approval.
const approvalNote = "Requires approval."

// Declarations returns the TypeScript for one connector: for each method
// `type <Prefix>Input = …;` and, when Output is set, `type <Prefix>Output =
// …;` (each with JSDoc from the schema description), then `declare const
// <name>: { … }` with one JSDoc-commented member per method:
// `method(input: <Prefix>Input): Promise<<Prefix>Output | unknown>`
// (Promise<unknown> without output schema). Methods requiring approval have
// "Requires approval." in their JSDoc.
//
// Prefixes are TypeName made unique within the connector (get_item and
// getItem give <C>GetItem and <C>GetItem2, in method order). Local $ref
// targets become type aliases named after the connector and the target
// (#/$defs/Entity -> <C>Entity), emitted after the method types that first
// use them; methods whose definition containers are identical share them.
// The output is deterministic and ends with a newline.
func Declarations(c Connector) string {
	return DeclarationsAll([]Connector{c})
}

// DeclarationsAll returns the declarations of several connectors, in order,
// as one file: like Declarations for each, but with type names unique across
// all of them.
func DeclarationsAll(cs []Connector) string {
	names := newNamer()
	var p printer
	for i, c := range cs {
		if i > 0 {
			p.newline()
		}
		connectorDeclarations(&p, names, c)
	}
	return p.b.String()
}

// MethodDeclaration returns the types of one method plus one line
// `<connector>.<method>(input: …): Promise<…>;` with its JSDoc (for
// codemode.describe("connector.method")). defs are the connector's shared
// definitions (may be nil).
func MethodDeclaration(connector string, defs *Definitions, m Method) string {
	names := newNamer()
	prefix := names.methodPrefixes(connector, []Method{m})[0]
	conv := newNamedConverter(connector, names, defs)
	in, out := conv.method(prefix, m)
	conv.drain()
	breakCycles(conv.defs)

	var p printer
	printTypes(&p, conv.defs)
	p.jsdoc(methodDoc(m))
	p.print(valueIdent(connector))
	if isValueIdent(m.Name) {
		p.print("." + m.Name)
	} else {
		p.print("[" + quote(m.Name) + "]")
	}
	p.print("(input: " + in.name + "): " + promiseOf(out) + ";")
	p.newline()
	return p.b.String()
}

func connectorDeclarations(p *printer, names *namer, c Connector) {
	prefixes := names.methodPrefixes(c.Name, c.Methods)
	conv := newNamedConverter(c.Name, names, c.Definitions)
	type sig struct{ in, out *namedType }
	sigs := make([]sig, len(c.Methods))
	for i, m := range c.Methods {
		sigs[i].in, sigs[i].out = conv.method(prefixes[i], m)
		conv.drain()
	}
	breakCycles(conv.defs)

	printTypes(p, conv.defs)
	p.jsdoc(textLines(c.Description))
	p.print("declare const " + valueIdent(c.Name) + ": {")
	p.indent++
	for i, m := range c.Methods {
		p.newline()
		p.jsdoc(methodDoc(m))
		p.print(propertyKey(m.Name) + "(input: " + sigs[i].in.name + "): " + promiseOf(sigs[i].out) + ";")
	}
	p.indent--
	p.newline()
	p.print("};")
	p.newline()
}

func newNamedConverter(connector string, names *namer, defs *Definitions) *converter {
	c := &converter{
		named:  true,
		prefix: pascal(connector),
		names:  names,
		refs:   map[string]*namedType{},
	}
	if defs != nil {
		c.shared = defs.doc
	}
	return c
}

// method defines the Input type and, when there is an output schema, the
// Output type of a method. Names were reserved by methodPrefixes.
func (c *converter) method(prefix string, m Method) (in, out *namedType) {
	in = c.root(prefix+"Input", c.newDocument(inputSchema(m.Input)))
	if !isAbsent(m.Output) {
		v, err := decode(m.Output)
		if err != nil {
			v = true // unknown
		}
		out = c.root(prefix+"Output", c.newDocument(v))
	}
	return in, out
}

// inputSchema decodes an input schema; absent means an object with any
// properties, invalid means unknown.
func inputSchema(raw json.RawMessage) any {
	if isAbsent(raw) {
		return map[string]any{"type": "object"}
	}
	v, err := decode(raw)
	if err != nil {
		return true
	}
	return v
}

func isAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// printTypes prints `type Name = …;` for each named type, each followed by
// a blank line.
func printTypes(p *printer, defs []*namedType) {
	for _, d := range defs {
		p.jsdoc(d.doc)
		p.print("type " + d.name + " = ")
		p.typ(normalize(d.typ))
		p.print(";")
		p.newline()
		p.newline()
	}
}

// promiseOf is a method's return type: the output schema's type when the
// tool declares one (its structured result is what the program receives),
// else unknown.
func promiseOf(out *namedType) string {
	if out == nil {
		return "Promise<unknown>"
	}
	return "Promise<" + out.name + ">"
}

// methodDoc is the JSDoc of a method: its description, the approval note
// and @deprecated.
func methodDoc(m Method) []string {
	lines := textLines(m.Description)
	if m.RequiresApproval {
		lines = append(lines, approvalNote)
	}
	if m.Deprecated {
		lines = append(lines, "@deprecated")
	}
	return lines
}
