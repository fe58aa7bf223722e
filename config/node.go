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

type nodeKind int

const (
	nullNode nodeKind = iota
	scalarNode
	mapNode
	seqNode
)

// scalarType is the YAML type of a scalar, used for type errors.
type scalarType int

const (
	strScalar scalarType = iota
	intScalar
	floatScalar
	boolScalar
)

type pos struct{ line, col int }

type node struct {
	kind nodeKind
	pos  pos
	// scalar
	text  string // the string's value, or the token's text for other scalars
	stype scalarType
	// mapping, in file order
	entries []entry
	// sequence
	items []*node
}

type entry struct {
	key    string
	keyPos pos
	val    *node
}

// describe names the node's type for error messages.
func (n *node) describe() string {
	switch n.kind {
	case nullNode:
		return "nothing"
	case mapNode:
		return "a mapping"
	case seqNode:
		return "a list"
	}
	switch n.stype {
	case intScalar, floatScalar:
		return "the number " + n.text
	case boolScalar:
		return "the boolean " + n.text
	}
	return fmt.Sprintf("the string %q", n.text)
}

// maxDepth bounds nesting; no valid configuration comes close.
const maxDepth = 64

type converter struct {
	d       *decoder
	anchors map[string]*node
}

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

func (c *converter) convert(n ast.Node, fp fieldPath, depth int) *node {
	if depth > maxDepth {
		c.d.errAt(nodePos(n), fp, fmt.Sprintf("nesting deeper than %d levels", maxDepth))
		return &node{kind: nullNode, pos: nodePos(n)}
	}
	p := nodePos(n)
	switch v := n.(type) {
	case nil:
		return &node{kind: nullNode}
	case *ast.NullNode:
		return &node{kind: nullNode, pos: p}
	case *ast.StringNode:
		return &node{kind: scalarNode, pos: p, text: v.Value, stype: strScalar}
	case *ast.LiteralNode:
		s := ""
		if v.Value != nil {
			s = v.Value.Value
		}
		return &node{kind: scalarNode, pos: p, text: s, stype: strScalar}
	case *ast.IntegerNode:
		return &node{kind: scalarNode, pos: p, text: tokText(v.Token), stype: intScalar}
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return &node{kind: scalarNode, pos: p, text: tokText(n.GetToken()), stype: floatScalar}
	case *ast.BoolNode:
		return &node{kind: scalarNode, pos: p, text: tokText(v.Token), stype: boolScalar}
	case *ast.TagNode:
		return c.tag(v, fp, depth)
	case *ast.AnchorNode:
		val := c.convert(v.Value, fp, depth+1)
		if name := anchorName(v.Name); name != "" {
			c.anchors[name] = val
		}
		return val
	case *ast.AliasNode:
		name := anchorName(v.Value)
		if val, ok := c.anchors[name]; ok {
			return val
		}
		c.d.errAt(p, fp, fmt.Sprintf("alias *%s refers to no anchor defined before it", name))
		return &node{kind: nullNode, pos: p}
	case *ast.MappingNode:
		return c.mapping(v, fp, depth)
	case *ast.MappingValueNode:
		return c.mapping(&ast.MappingNode{Values: []*ast.MappingValueNode{v}}, fp, depth)
	case *ast.SequenceNode:
		out := &node{kind: seqNode, pos: p}
		for i, item := range v.Values {
			out.items = append(out.items, c.convert(item, fp.index(i), depth+1))
		}
		return out
	case *ast.CommentGroupNode, *ast.CommentNode:
		return &node{kind: nullNode, pos: p}
	}
	c.d.errAt(p, fp, fmt.Sprintf("unsupported YAML construct (%s)", n.Type()))
	return &node{kind: nullNode, pos: p}
}

func tokText(tk *token.Token) string {
	if tk == nil {
		return ""
	}
	return tk.Value
}

func anchorName(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}

// tag honours !!str (the scalar stays a string) and the other core tags
// (ignored: the value's own type decides); other tags are not supported.
func (c *converter) tag(v *ast.TagNode, fp fieldPath, depth int) *node {
	name := tokText(v.Start)
	val := c.convert(v.Value, fp, depth+1)
	switch name {
	case "!!str":
		if val.kind == scalarNode {
			val = &node{kind: scalarNode, pos: val.pos, text: val.text, stype: strScalar}
		}
		return val
	case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!binary", "!!timestamp":
		return val
	}
	c.d.errAt(tokPos(v.Start), fp, fmt.Sprintf("unsupported YAML tag %s", name))
	return val
}

func (c *converter) mapping(m *ast.MappingNode, fp fieldPath, depth int) *node {
	out := &node{kind: mapNode, pos: nodePos(m)}
	seen := map[string]pos{}
	var merged []entry
	for _, mv := range m.Values {
		if mv == nil {
			continue
		}
		if isMergeKey(mv.Key) {
			merged = append(merged, c.mergeSource(mv.Value, fp, depth)...)
			continue
		}
		key, kp, ok := c.keyText(mv.Key, fp)
		if !ok {
			continue
		}
		if first, dup := seen[key]; dup {
			c.d.errAt(kp, fp.key(key), fmt.Sprintf("duplicate key %q (first defined at line %d)", key, first.line))
			continue
		}
		seen[key] = kp
		out.entries = append(out.entries, entry{key: key, keyPos: kp, val: c.convert(mv.Value, fp.key(key), depth+1)})
	}
	// Merged keys never override the mapping's own keys.
	for _, e := range merged {
		if _, ok := seen[e.key]; !ok {
			seen[e.key] = e.keyPos
			out.entries = append(out.entries, e)
		}
	}
	return out
}

func isMergeKey(k ast.MapKeyNode) bool {
	if k == nil {
		return false
	}
	if _, ok := k.(*ast.MergeKeyNode); ok {
		return true
	}
	return k.IsMergeKey()
}

// mergeSource returns the entries of a "<<" value: a mapping or a list of
// mappings (earlier ones win).
func (c *converter) mergeSource(v ast.Node, fp fieldPath, depth int) []entry {
	n := c.convert(v, fp, depth+1)
	var srcs []*node
	switch n.kind {
	case mapNode:
		srcs = []*node{n}
	case seqNode:
		srcs = n.items
	}
	var out []entry
	have := map[string]bool{}
	for _, s := range srcs {
		if s.kind != mapNode {
			c.d.errAt(s.pos, fp, "a merge key (<<) takes a mapping or a list of mappings")
			return nil
		}
		for _, e := range s.entries {
			if !have[e.key] {
				have[e.key] = true
				out = append(out, e)
			}
		}
	}
	if len(srcs) == 0 {
		c.d.errAt(n.pos, fp, "a merge key (<<) takes a mapping or a list of mappings")
	}
	return out
}

// keyText returns a mapping key as text; keys must be scalars.
func (c *converter) keyText(k ast.MapKeyNode, fp fieldPath) (string, pos, bool) {
	var n ast.Node = k
	for {
		switch v := n.(type) {
		case *ast.MappingKeyNode:
			n = v.Value
			continue
		case *ast.TagNode:
			n = v.Value
			continue
		case *ast.AnchorNode:
			n = v.Value
			continue
		}
		break
	}
	p := nodePos(n)
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, p, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		return strings.TrimSpace(tokText(n.GetToken())), p, true
	}
	if n == nil {
		p = nodePos(k)
	}
	c.d.errAt(p, fp, "mapping keys must be plain strings")
	return "", p, false
}
