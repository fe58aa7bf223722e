package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The YAML AST is first turned into this small tree: aliases and merge keys
// resolved, duplicate keys reported, every node with its position. Decoding
// then works on plain values without caring about YAML's corners.

// nodeKind is a node's shape, and a scalar's YAML type (for type errors).
type nodeKind int

const (
	nullNode nodeKind = iota
	strNode
	intNode
	floatNode
	boolNode
	mapNode
	seqNode
)

type pos struct{ line, col int }

type node struct {
	kind    nodeKind
	pos     pos
	text    string  // a scalar: the string's value, or the token's text
	entries []entry // a mapping, in file order
	items   []*node // a sequence
}

type entry struct {
	key    string
	keyPos pos
	val    *node
}

func (n *node) scalar() bool { return n.kind >= strNode && n.kind <= boolNode }

// describe names the node's type for error messages.
func (n *node) describe() string {
	switch n.kind {
	case nullNode:
		return "nothing"
	case mapNode:
		return "a mapping"
	case seqNode:
		return "a list"
	case intNode, floatNode:
		return "the number " + n.text
	case boolNode:
		return "the boolean " + n.text
	}
	return fmt.Sprintf("the string %q", n.text)
}

// maxDepth bounds nesting; no valid configuration comes close.
const maxDepth = 64

func tokPos(tk *token.Token) pos {
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// nodePos is where a node starts: a block mapping at its first key, not at
// its first ':'.
func nodePos(n ast.Node) pos {
	if n == nil {
		return pos{}
	}
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 && m.Values[0].Key != nil {
		return nodePos(m.Values[0].Key)
	}
	return tokPos(n.GetToken())
}

func (d *decoder) convert(n ast.Node, fp fieldPath, depth int) *node {
	p := nodePos(n)
	null := &node{kind: nullNode, pos: p}
	if depth > maxDepth {
		d.errAt(p, fp, fmt.Sprintf("nesting deeper than %d levels", maxDepth))
		return null
	}
	switch v := n.(type) {
	case nil, *ast.CommentGroupNode, *ast.CommentNode:
		return null
	case *ast.NullNode: // its text is a key's
		return &node{kind: nullNode, pos: p, text: tokText(v.Token)}
	case *ast.StringNode:
		return &node{kind: strNode, pos: p, text: v.Value}
	case *ast.LiteralNode:
		s := ""
		if v.Value != nil {
			s = v.Value.Value
		}
		return &node{kind: strNode, pos: p, text: s}
	case *ast.IntegerNode:
		return &node{kind: intNode, pos: p, text: tokText(v.Token)}
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return &node{kind: floatNode, pos: p, text: tokText(n.GetToken())}
	case *ast.BoolNode:
		return &node{kind: boolNode, pos: p, text: tokText(v.Token)}
	case *ast.TagNode:
		return d.tag(v, fp, depth)
	case *ast.AnchorNode:
		val := d.convert(v.Value, fp, depth+1)
		if v.Name != nil {
			d.anchors[tokText(v.Name.GetToken())] = val
		}
		return val
	case *ast.AliasNode:
		name := ""
		if v.Value != nil {
			name = tokText(v.Value.GetToken())
		}
		if val, ok := d.anchors[name]; ok {
			return val
		}
		d.errAt(p, fp, fmt.Sprintf("alias *%s refers to no anchor defined before it", name))
		return null
	case *ast.MappingKeyNode: // "? key"
		return d.convert(v.Value, fp, depth+1)
	case *ast.MappingNode:
		return d.mapping(v, fp, depth)
	case *ast.MappingValueNode:
		return d.mapping(&ast.MappingNode{Values: []*ast.MappingValueNode{v}}, fp, depth)
	case *ast.SequenceNode:
		out := &node{kind: seqNode, pos: p}
		for i, item := range v.Values {
			out.items = append(out.items, d.convert(item, fp.index(i), depth+1))
		}
		return out
	}
	d.errAt(p, fp, fmt.Sprintf("unsupported YAML construct (%s)", n.Type()))
	return null
}

func tokText(tk *token.Token) string {
	if tk == nil {
		return ""
	}
	return tk.Value
}

// tag honours !!str (the scalar stays a string) and the other core tags
// (ignored: the value's own type decides); other tags are not supported.
func (d *decoder) tag(v *ast.TagNode, fp fieldPath, depth int) *node {
	name := tokText(v.Start)
	val := d.convert(v.Value, fp, depth+1)
	switch name {
	case "!!str":
		if val.scalar() {
			val = &node{kind: strNode, pos: val.pos, text: val.text}
		}
		return val
	case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!binary", "!!timestamp":
		return val
	}
	d.errAt(tokPos(v.Start), fp, fmt.Sprintf("unsupported YAML tag %s", name))
	return val
}

// mapping converts a mapping: its own keys first, then those of its merge
// keys ("<<": a mapping or a list of mappings) that it does not have, the
// earlier sources winning.
func (d *decoder) mapping(m *ast.MappingNode, fp fieldPath, depth int) *node {
	out := &node{kind: mapNode, pos: nodePos(m)}
	seen := map[string]pos{}
	var merged []*node
	for _, mv := range m.Values {
		switch {
		case mv == nil:
			continue
		case mv.Key != nil && mv.Key.IsMergeKey():
			merged = append(merged, d.mergeSources(mv.Value, fp, depth)...)
			continue
		}
		k := d.convert(mv.Key, fp, depth+1)
		key := k.text
		if k.kind != strNode {
			key = strings.TrimSpace(key)
		}
		if mv.Key == nil || !k.scalar() && k.kind != nullNode {
			d.errAt(k.pos, fp, "mapping keys must be plain strings")
			continue
		}
		if first, dup := seen[key]; dup {
			d.errAt(k.pos, fp.key(key), fmt.Sprintf("duplicate key %q (first defined at line %d)", key, first.line))
			continue
		}
		seen[key] = k.pos
		out.entries = append(out.entries, entry{key: key, keyPos: k.pos, val: d.convert(mv.Value, fp.key(key), depth+1)})
	}
	for _, src := range merged {
		for _, e := range src.entries {
			if _, ok := seen[e.key]; !ok {
				seen[e.key] = e.keyPos
				out.entries = append(out.entries, e)
			}
		}
	}
	return out
}

// mergeSources returns the mappings a "<<" value names.
func (d *decoder) mergeSources(v ast.Node, fp fieldPath, depth int) []*node {
	n := d.convert(v, fp, depth+1)
	srcs := []*node{n}
	if n.kind == seqNode {
		srcs = n.items
	}
	for _, s := range srcs {
		if s.kind != mapNode {
			d.errAt(s.pos, fp, "a merge key (<<) takes a mapping or a list of mappings")
			return nil
		}
	}
	if len(srcs) == 0 {
		d.errAt(n.pos, fp, "a merge key (<<) takes a mapping or a list of mappings")
	}
	return srcs
}
