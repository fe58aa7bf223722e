package typegen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// Connector is one sandbox global.
type Connector struct {
	Name        string // JS identifier
	Description string // optional one-liner
	// Methods are its methods as connectors list them; typegen reads a
	// method's Name (a JS identifier, already sanitized), Description
	// (else Title), InputSchema (absent: an object with any properties),
	// OutputSchema (absent: unknown), RequiresApproval and Deprecated.
	Methods []connectors.Tool
	// Definitions, when set, holds schemas the methods' schemas share, as
	// decoded by jsonref.Decode (the value the caller validates against;
	// typegen does not change it): a local $ref into a definition
	// container ("#/components/schemas/X", "#/$defs/X",
	// "#/definitions/X") that does not resolve within a method's own
	// schema resolves here, and becomes one named type for the whole
	// connector. A value that is not an object resolves nothing.
	Definitions any
}

// approvalNote ends the JSDoc of methods that require approval.
const approvalNote = "Requires approval."

// Declarations returns the TypeScript for one connector: for each method
// `type <Prefix>Input = …;` and, when Output is set, `type <Prefix>Output =
// …;` (each with JSDoc from the schema description), then `declare const
// <name>: { … }` with one JSDoc-commented member per method:
// `method(input: <Prefix>Input): Promise<<Prefix>Output | unknown>`
// (Promise<unknown> without output schema). Methods requiring approval have
// "Requires approval." in their JSDoc. A dotted name ("github.issues")
// declares the first segment, holding the rest as nested objects:
// `declare const github: { issues: { … } }`.
//
// Prefixes are PascalCase of connector and method, made unique within
// the connector (get_item and getItem give <C>GetItem and <C>GetItem2, in
// method order; see methodPrefixes). Local $ref
// targets become type aliases named after the connector and the target
// (#/$defs/Entity -> <C>Entity), emitted after the method types that first
// use them; methods whose definition containers are identical share them.
// The output is deterministic and ends with a newline.
func Declarations(c Connector) string {
	return Generate([]Connector{c}).Text
}

// Result is what Generate produces.
type Result struct {
	// Text is the declarations (see Generate).
	Text string
	// Diagnostics report what the declarations do not express exactly:
	// unsupported keywords, references not followed, cut cycles, depth
	// limits, connectors left out because their names clash. In
	// connector order, each connector's in the order its schemas were
	// converted.
	Diagnostics []Diagnostic
}

// Generate returns the declarations of several connectors, in order, as
// one file, and what they do not express exactly: like Declarations for
// each, but with type names unique across all of them and apart from
// reserved (those of declarations printed in the same file), and connectors whose names share a first segment (mcp.a,
// mcp.b) declared as one object (`declare const mcp: { a: {…}; b: {…} }`),
// after the types of all of them. Each segment of a connector's name is
// declared as the sandbox names its globals (connectors.Identifier:
// connector names are validated long before they reach typegen; this only
// keeps the output valid whatever the input). A connector whose name so
// sanitized equals another's, or is the namespace of another ("a" and
// "a.b"), is left out with a diagnostic: the sandbox refuses such names
// anyway, and the output stays valid.
func Generate(cs []Connector, reserved ...string) Result {
	names := newNamer(reserved)
	roots, diags := declaredGlobals(cs)
	var p printer
	for i, g := range roots {
		if i > 0 {
			p.newline()
		}
		diags = append(diags, globalDeclarations(&p, names, g)...)
	}
	return Result{Text: p.b.String(), Diagnostics: diags}
}

// member is a declared global or one of its nested objects: a connector,
// or a namespace holding connectors and namespaces.
type member struct {
	name string     // identifier
	conn *Connector // set for a connector
	kids []*member  // a namespace's members, in order of first appearance
	// leaves (on a global) are the connectors declared within it, in
	// input order.
	leaves []*member
	// sigs are conn's methods' parameters and return types, once
	// converted: "(input: XInput): Promise<XOutput>".
	sigs []string
}

// declaredGlobals arranges connectors by global, in order of first
// appearance; connectors whose names clash are left out with a diagnostic.
func declaredGlobals(cs []Connector) ([]*member, []Diagnostic) {
	var roots []*member
	var diags []Diagnostic
	byPath := map[string]*member{}
	for i := range cs {
		c := &cs[i]
		segs := strings.Split(c.Name, ".")
		var root, parent *member
		path := ""
		for j, seg := range segs {
			seg = connectors.Identifier(seg)
			if j > 0 {
				path += "."
			}
			path += seg
			m := byPath[path]
			last := j == len(segs)-1
			if m != nil && (m.conn != nil || last) {
				diags = append(diags, Diagnostic{Connector: c.Name, Message: fmt.Sprintf(
					"connector name %s clashes with another connector's name or namespace (%s); it is left out of the declarations", compactJSON(c.Name), path)})
				break
			}
			if m == nil {
				m = &member{name: seg}
				byPath[path] = m
				if parent == nil {
					roots = append(roots, m)
				} else {
					parent.kids = append(parent.kids, m)
				}
			}
			if root == nil {
				root = m
			}
			if last {
				m.conn = c
				root.leaves = append(root.leaves, m)
			}
			parent = m
		}
	}
	return roots, diags
}

// globalDeclarations prints the types of every connector within global g,
// then `declare const <g>: {…};`.
func globalDeclarations(p *printer, names namer, g *member) []Diagnostic {
	var diags []Diagnostic
	for _, m := range g.leaves {
		c := m.conn
		prefixes := names.methodPrefixes(c.Name, c.Methods)
		conv := &converter{named: true, prefix: pascal(c.Name), names: names, refs: map[string]*namedType{}, connector: c.Name}
		if c.Definitions != nil {
			conv.shared = &document{value: c.Definitions, id: -1, part: "definitions"}
		}
		m.sigs = make([]string, len(c.Methods))
		for i, meth := range c.Methods {
			in, out := conv.method(prefixes[i], meth)
			conv.drain()
			// The output schema's type when the tool declares one (its
			// structured result is what the program receives), else unknown.
			ret := "unknown"
			if out != nil {
				ret = out.name
			}
			m.sigs[i] = "(input: " + in.name + "): Promise<" + ret + ">"
		}
		conv.breakCycles()
		printTypes(p, conv.defs)
		diags = append(diags, conv.diags...)
	}
	if g.conn != nil {
		p.jsdoc(textLines(g.conn.Description))
	}
	p.print("declare const " + g.name + ": ")
	p.memberType(g)
	p.print(";")
	p.newline()
	return diags
}

// memberType prints the object type of a connector (its methods) or a
// namespace (its members, each with its connector's description).
func (p *printer) memberType(m *member) {
	p.print("{")
	p.indent++
	if c := m.conn; c != nil {
		for i, meth := range c.Methods {
			p.newline()
			p.jsdoc(methodDoc(meth))
			p.print(propertyKey(meth.Name) + m.sigs[i] + ";")
		}
	}
	for _, k := range m.kids {
		p.newline()
		if k.conn != nil {
			p.jsdoc(textLines(k.conn.Description))
		}
		p.print(propertyKey(k.name) + ": ")
		p.memberType(k)
		p.print(";")
	}
	p.indent--
	p.newline()
	p.print("}")
}

// method defines the Input type and, when there is an output schema, the
// Output type of a method. Names were reserved by methodPrefixes.
func (c *converter) method(prefix string, m connectors.Tool) (in, out *namedType) {
	input := m.InputSchema
	if isAbsent(input) {
		input = json.RawMessage(`{"type":"object"}`) // an object with any properties
	}
	in = c.root(prefix+"Input", c.document(input, m.Name, "input"))
	if !isAbsent(m.OutputSchema) {
		out = c.root(prefix+"Output", c.document(m.OutputSchema, m.Name, "output"))
	}
	return in, out
}

// document decodes a method's schema, its part ("input", "output"), for
// named mode; one that is not JSON is reported and means unknown.
func (c *converter) document(raw json.RawMessage, method, part string) *document {
	v, err := jsonref.Decode(raw)
	c.nextID++
	d := &document{value: v, id: c.nextID, shared: sharedKey(v), method: method, part: part}
	if err != nil {
		d.value = true // unknown
		c.base, c.at = "", nil
		c.note(d, "", "the schema is not valid JSON; typed unknown")
	}
	return d
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

// methodDoc is the JSDoc of a method: its description, the approval note
// and @deprecated.
func methodDoc(m connectors.Tool) []string {
	lines := textLines(cmp.Or(m.Description, m.Title))
	if m.RequiresApproval {
		lines = append(lines, approvalNote)
	}
	if m.Deprecated {
		lines = append(lines, "@deprecated")
	}
	return lines
}
