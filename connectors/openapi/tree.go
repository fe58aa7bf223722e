package openapi

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// A node is one parsed JSON value of a document. Objects keep their
// members in document order (derived methods follow the document), so a
// node is not a map; objects with many members get an index.
type node struct {
	kind kind
	// str is a string's text, a number's text as written, or for a bool
	// "true" or "false".
	str   string
	items []node // array items
	keys  []string
	vals  []node         // object members, in document order
	index map[string]int // key -> position, for objects past indexFrom members
}

// indexFrom is the member count from which an object gets an index: a
// linear scan is faster below it.
const indexFrom = 24

// maxDocDepth bounds the nesting of a document.
const maxDocDepth = 512

// parseJSON parses a whole document; ok is false when b is not one JSON
// value.
func parseJSON(b []byte) (node, bool) {
	return jsontext.Parse[node](b, maxDocDepth, treeBuilder{})
}

type treeBuilder struct{}

func (treeBuilder) Null() node { return node{kind: kNull} }
func (treeBuilder) Bool(b bool) node {
	if b {
		return node{kind: kBool, str: "true"}
	}
	return node{kind: kBool, str: "false"}
}
func (treeBuilder) Number(t []byte) (node, bool) { return node{kind: kNumber, str: string(t)}, true }
func (treeBuilder) String(s string) node         { return node{kind: kString, str: s} }
func (treeBuilder) Array(items []node) node      { return node{kind: kArray, items: items} }
func (treeBuilder) Object(keys []string, vals []node) (node, bool) {
	n := node{kind: kObject, keys: keys, vals: vals}
	if len(keys) >= indexFrom {
		n.index = make(map[string]int, len(keys))
		for i := len(keys) - 1; i >= 0; i-- {
			n.index[keys[i]] = i // the first of duplicate keys wins
		}
	}
	return n, true
}

// get returns the member key of an object, or nil (also for non-objects).
// Of duplicate keys, the first counts.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return &n.vals[i]
		}
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return &n.vals[i]
		}
	}
	return nil
}

// has reports whether an object has key.
func (n *node) has(key string) bool { return n.get(key) != nil }

// isObject, isArray and isString report n's kind (false for nil).
func (n *node) isObject() bool { return n != nil && n.kind == kObject }
func (n *node) isArray() bool  { return n != nil && n.kind == kArray }
func (n *node) isString() bool { return n != nil && n.kind == kString }

// text returns a string node's text, or "".
func (n *node) text() string {
	if n == nil || n.kind != kString {
		return ""
	}
	return n.str
}

// getText returns the text of member key when it is a string, or "".
func (n *node) getText(key string) string { return n.get(key).text() }

// getBool returns member key when it is a boolean, else def.
func (n *node) getBool(key string, def bool) bool {
	v := n.get(key)
	if v == nil || v.kind != kBool {
		return def
	}
	return v.str == "true"
}

// isTrue reports whether n is the boolean true.
func (n *node) isTrue() bool { return n != nil && n.kind == kBool && n.str == "true" }

// strings returns the string items of an array member.
func (n *node) strings(key string) []string {
	v := n.get(key)
	if !v.isArray() {
		return nil
	}
	var out []string
	for i := range v.items {
		if v.items[i].kind == kString {
			out = append(out, v.items[i].str)
		}
	}
	return out
}

// resolvePointer resolves a JSON pointer ("/a/b~1c", already without '#')
// within root; percent-encoding in the pointer is decoded first.
func resolvePointer(root *node, ptr string) *node {
	if ptr == "" {
		return root
	}
	if p, err := url.PathUnescape(ptr); err == nil {
		ptr = p
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch {
		case cur.isObject():
			cur = cur.get(tok)
		case cur.isArray():
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.items) || (len(tok) > 1 && tok[0] == '0') {
				return nil
			}
			cur = &cur.items[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// escapePointerToken escapes one JSON pointer token.
func escapePointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
