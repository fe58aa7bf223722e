package typegen

import "strings"

// maxInline is the longest object type printed on one line; longer ones, and
// any with JSDoc, are printed one member per line.
const maxInline = 72

// printer writes TypeScript with 2-space indentation.
type printer struct {
	b      strings.Builder
	indent int
	// inline forbids line breaks; failed records that something needed one.
	inline bool
	failed bool
}

func (p *printer) print(s string) { p.b.WriteString(s) }

// newline ends the line and indents the next one.
func (p *printer) newline() {
	if p.inline {
		p.failed = true
		return
	}
	p.b.WriteByte('\n')
	for range p.indent {
		p.b.WriteString("  ")
	}
}

// jsdoc prints a JSDoc comment on its own line(s), followed by a newline;
// lines must already be clean (see textLines).
func (p *printer) jsdoc(lines []string) {
	switch {
	case len(lines) == 0:
		return
	case p.inline:
		p.failed = true // JSDoc takes lines of its own
		return
	case len(lines) == 1:
		p.print("/** " + lines[0] + " */")
		p.newline()
		return
	}
	p.print("/**")
	for _, l := range lines {
		p.newline()
		if l == "" {
			p.print(" *")
		} else {
			p.print(" * " + l)
		}
	}
	p.newline()
	p.print(" */")
	p.newline()
}

// render returns t printed at indentation zero; inline, on one line, or
// false when it carries JSDoc.
func render(t *tsType, inline bool) (string, bool) {
	p := printer{inline: inline}
	p.typ(t)
	return p.b.String(), !p.failed
}

// typ prints a normalized type expression.
func (p *printer) typ(t *tsType) {
	switch t.kind {
	case kUnknown:
		p.print("unknown")
	case kNever:
		p.print("never")
	case kText:
		p.print(t.text)
	case kRef:
		p.print(t.def.name)
	case kArray:
		p.operand(t.elem, kArray)
		p.print("[]")
	case kTuple:
		p.print("[")
		for i, it := range t.items {
			if i > 0 {
				p.print(", ")
			}
			p.typ(it)
		}
		if t.elem != nil {
			if len(t.items) > 0 {
				p.print(", ")
			}
			p.print("...")
			p.operand(t.elem, kArray)
			p.print("[]")
		}
		p.print("]")
	case kUnion, kIntersection:
		sep := " | "
		if t.kind == kIntersection {
			sep = " & "
		}
		for i, it := range t.items {
			if i > 0 {
				p.print(sep)
			}
			p.operand(it, t.kind)
		}
	case kObject:
		p.object(t)
	}
}

// operand prints t within a type of kind outer, parenthesized when it is
// a union or an intersection of another kind.
func (p *printer) operand(t *tsType, outer kind) {
	paren := (t.kind == kUnion || t.kind == kIntersection) && t.kind != outer
	if paren {
		p.print("(")
	}
	p.typ(t)
	if paren {
		p.print(")")
	}
}

// object prints an object type on one line when it is short and has no
// JSDoc, else one member per line.
func (p *printer) object(t *tsType) {
	if len(t.props) == 0 && t.index == nil {
		p.print("{}")
		return
	}
	if !p.inline {
		if s, ok := render(t, true); ok && len(s) <= maxInline {
			p.print(s)
			return
		}
	}
	p.print("{")
	p.indent++
	for i, pr := range t.props {
		p.member(i)
		p.jsdoc(pr.doc)
		p.print(propertyKey(pr.key))
		if pr.optional {
			p.print("?")
		}
		p.print(": ")
		p.typ(pr.typ)
	}
	if t.index != nil {
		p.member(len(t.props))
		p.print("[key: string]: ")
		p.typ(t.index)
	}
	p.indent--
	if p.inline {
		p.print(" }")
		return
	}
	p.print(";")
	p.newline()
	p.print("}")
}

// member begins the i-th member of an object type: after "{ " or "; " on
// one line, else on a line of its own after the previous member's ";".
func (p *printer) member(i int) {
	switch {
	case p.inline && i == 0:
		p.print(" ")
	case p.inline:
		p.print("; ")
	case i > 0:
		p.print(";")
		p.newline()
	default:
		p.newline()
	}
}
