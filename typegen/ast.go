package typegen

import (
	"fmt"
	"slices"
)

// kind is the kind of a TypeScript type expression.
type kind int

const (
	kUnknown      kind = iota // unknown
	kNever                    // never
	kText                     // a keyword (string, number, …) or a literal type, as printed
	kRef                      // a named type (def)
	kArray                    // elem[]
	kTuple                    // [items..., ...rest[]]
	kUnion                    // items joined by |
	kIntersection             // items joined by &
	kObject                   // { props; [key: string]: index }
)

// tsType is a TypeScript type expression. Trees are built by the converter,
// have their direct reference cycles cut, and are normalized just before
// printing. Text could not be printed as the schema is read: which
// references form a cycle is known only once every named type is
// converted, and a cut reference (unknown) changes the union or
// intersection holding it, which normalization needs as members, not text.
type tsType struct {
	kind  kind
	text  string     // kText
	def   *namedType // kRef
	elem  *tsType    // kArray; kTuple's rest element type (nil: closed tuple)
	items []*tsType  // kTuple elements; kUnion/kIntersection members
	props []prop     // kObject
	index *tsType    // kObject index signature type (nil: none)
}

// prop is one property of an object type.
type prop struct {
	key      string
	optional bool
	typ      *tsType
	doc      []string
}

// namedType is a type alias of the output: a method's Input or Output type,
// or a type for a $ref target.
type namedType struct {
	name string
	doc  []string
	typ  *tsType

	// what to build typ from; nil once built
	src    *document
	schema any
	// where the schema is, for diagnostics
	method, part, pointer string
}

func unknownType() *tsType       { return &tsType{kind: kUnknown} }
func neverType() *tsType         { return &tsType{kind: kNever} }
func text(t string) *tsType      { return &tsType{kind: kText, text: t} }
func arrayOf(e *tsType) *tsType  { return &tsType{kind: kArray, elem: e} }
func refTo(d *namedType) *tsType { return &tsType{kind: kRef, def: d} }

func union(items ...*tsType) *tsType {
	return &tsType{kind: kUnion, items: items}
}

func intersection(items ...*tsType) *tsType {
	return &tsType{kind: kIntersection, items: items}
}

// normalize simplifies t, in place, and returns it or what replaces it:
// nested unions and intersections flattened, duplicates removed, unknown
// absorbing unions and vanishing from intersections, never vanishing from
// unions and absorbing intersections, and object index signatures widened
// so every property fits them (as TypeScript requires; when a property
// holds an object type the index becomes unknown instead, to keep the
// output linear). A normalized tree normalizes to itself.
func normalize(t *tsType) *tsType {
	switch t.kind {
	case kArray:
		t.elem = normalize(t.elem)
	case kTuple:
		for i, it := range t.items {
			t.items[i] = normalize(it)
		}
		if t.elem != nil {
			t.elem = normalize(t.elem)
		}
	case kUnion, kIntersection:
		return normalizeSet(t)
	case kObject:
		normalizeObject(t)
	}
	return t
}

func normalizeSet(t *tsType) *tsType {
	absorbing, neutral := kUnknown, kNever
	if t.kind == kIntersection {
		absorbing, neutral = kNever, kUnknown
	}
	var members []*tsType
	seen := map[string]bool{}
	var add func(m *tsType) bool
	add = func(m *tsType) bool {
		m = normalize(m)
		switch {
		case m.kind == absorbing:
			return false
		case m.kind == neutral:
			return true
		case m.kind == t.kind:
			for _, it := range m.items {
				if !add(it) {
					return false
				}
			}
			return true
		}
		if k, _ := render(m, false); !seen[k] {
			seen[k] = true
			members = append(members, m)
		}
		return true
	}
	for _, it := range t.items {
		if !add(it) {
			return &tsType{kind: absorbing}
		}
	}
	switch len(members) {
	case 0:
		return &tsType{kind: neutral}
	case 1:
		return members[0]
	}
	return &tsType{kind: t.kind, items: members}
}

func normalizeObject(t *tsType) {
	optional := false
	types := make([]*tsType, len(t.props))
	for i := range t.props {
		t.props[i].typ = normalize(t.props[i].typ)
		types[i] = t.props[i].typ
		optional = optional || t.props[i].optional
	}
	if t.index == nil {
		return
	}
	t.index = normalize(t.index)
	switch {
	case len(t.props) == 0:
	case hasObject(types...):
		// Repeating object-typed properties in the index signature would
		// double the output at every level of nesting.
		t.index = unknownType()
	case t.index.kind != kUnknown:
		members := append([]*tsType{t.index}, types...)
		if optional {
			members = append(members, text("undefined"))
		}
		t.index = normalize(union(members...))
	}
}

// hasObject reports whether any of ts contains an object type.
func hasObject(ts ...*tsType) bool {
	return slices.ContainsFunc(ts, func(t *tsType) bool {
		return t.kind == kObject || t.elem != nil && hasObject(t.elem) || hasObject(t.items...)
	})
}

// directRefs returns the reference nodes of t that TypeScript resolves
// eagerly: t itself and the members of unions and intersections. References
// inside arrays, tuples and object members are deferred, so recursion through
// them is allowed.
func directRefs(t *tsType, out []*tsType) []*tsType {
	switch t.kind {
	case kRef:
		return append(out, t)
	case kUnion, kIntersection:
		for _, it := range t.items {
			out = directRefs(it, out)
		}
	}
	return out
}

// maxEager bounds a chain of type aliases that TypeScript resolves
// eagerly, each through the next (type A = B; type B = C | string; …):
// tsc overflows its stack on a chain of some 800, and a check that
// crashes refuses every program.
const maxEager = 64

// breakCycles replaces references that would make a type alias circular
// (type A = B | string; type B = A), or begin an eager chain longer than
// maxEager, with unknown, and reports each. It cuts the back edges of a
// depth-first walk in definition order, which leaves the eager reference
// graph acyclic, and the edges to types whose longest chain is already
// maxEager long.
func (c *converter) breakCycles() {
	defs := c.defs
	const (
		unseen = iota
		active
		done
	)
	state := map[*namedType]int{}
	height := map[*namedType]int{} // a done type's longest eager chain, itself included
	var visit func(d *namedType)
	visit = func(d *namedType) {
		state[d] = active
		h := 0
		for _, r := range directRefs(d.typ, nil) {
			why := ""
			switch state[r.def] {
			case active:
				why = " through unions or intersections only, which TypeScript cannot declare"
			case unseen:
				visit(r.def)
			}
			if why == "" && height[r.def] >= maxEager {
				why = fmt.Sprintf(", the start of a chain of %d or more types each made of the next (TypeScript overflows its stack on long ones)", maxEager)
			}
			if why == "" {
				h = max(h, height[r.def])
				continue
			}
			c.diags = append(c.diags, Diagnostic{
				Connector: c.connector, Method: d.method, Part: d.part, Pointer: d.pointer, Keyword: "$ref",
				Message: fmt.Sprintf("type %s refers to %s%s; that reference is typed unknown", d.name, r.def.name, why),
			})
			*r = tsType{kind: kUnknown}
		}
		height[d] = h + 1
		state[d] = done
	}
	for _, d := range defs {
		if state[d] == unseen {
			visit(d)
		}
	}
}
