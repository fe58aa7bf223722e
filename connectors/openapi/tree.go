package openapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// valueKind is the JSON type of a value.
type valueKind uint8

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// A value is one parsed JSON value: of a document, or of a call's
// arguments. Objects keep their members in the order written (derived
// methods follow the document; a call sends `{R, G, B}` as R, G, B) and
// numbers as written (12345678901234567890 is not rounded), so a value is
// not a map; objects with many members get an index. Of duplicate keys the
// last counts, as JSON.parse and encoding/json decide.
type value struct {
	kind valueKind
	// text is a string's content, a number as written, or "true"/"false".
	text string
	// keys are an object's member names; items are an array's items or an
	// object's member values (items[i] is the value of keys[i]).
	keys  []string
	items []value
	index map[string]int // key -> position, for objects past indexFrom members
}

// indexFrom is the member count from which an object gets an index: a
// linear scan is faster below it.
const indexFrom = 24

// Nesting bounds: of a document, and of a call's arguments.
const (
	maxDocDepth   = 512
	maxValueDepth = 64
)

// parseJSON parses a whole document; ok is false when b is not one JSON
// value.
func parseJSON(b []byte) (value, bool) {
	return jsontext.Parse[value](b, maxDocDepth, valueBuilder{})
}

// parseValue parses a call's arguments.
func parseValue(raw []byte) (value, error) {
	v, ok := jsontext.Parse(raw, maxValueDepth, valueBuilder{})
	if !ok {
		return value{}, fmt.Errorf("invalid JSON, or nested deeper than %d levels", maxValueDepth)
	}
	return v, nil
}

// valueBuilder builds values for jsontext.Parse.
type valueBuilder struct{}

func (valueBuilder) Null() value { return value{} }
func (valueBuilder) Bool(b bool) value {
	if b {
		return value{kind: kindBool, text: "true"}
	}
	return value{kind: kindBool, text: "false"}
}
func (valueBuilder) Number(t []byte) (value, bool) {
	return value{kind: kindNumber, text: string(t)}, true
}
func (valueBuilder) String(s string) value     { return value{kind: kindString, text: s} }
func (valueBuilder) Array(items []value) value { return value{kind: kindArray, items: items} }
func (valueBuilder) Object(keys []string, vals []value) (value, bool) {
	v := value{kind: kindObject, keys: keys, items: vals}
	if len(keys) >= indexFrom {
		v.index = make(map[string]int, len(keys))
		for i, k := range keys {
			v.index[k] = i // the last of duplicate keys wins
		}
	}
	return v, true
}

// get returns the member key of an object, or nil (also for non-objects).
func (n *value) get(key string) *value {
	if n == nil || n.kind != kindObject {
		return nil
	}
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return &n.items[i]
		}
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return &n.items[i]
		}
	}
	return nil
}

// has reports whether an object has key.
func (n *value) has(key string) bool { return n.get(key) != nil }

// isObject, isArray and isString report n's kind (false for nil).
func (n *value) isObject() bool { return n != nil && n.kind == kindObject }
func (n *value) isArray() bool  { return n != nil && n.kind == kindArray }
func (n *value) isString() bool { return n != nil && n.kind == kindString }

// textValue returns a string value's text, or "" (also for nil).
func (n *value) textValue() string {
	if n == nil || n.kind != kindString {
		return ""
	}
	return n.text
}

// getText returns the text of member key when it is a string, or "".
func (n *value) getText(key string) string { return n.get(key).textValue() }

// getBool returns member key when it is a boolean, else def.
func (n *value) getBool(key string, def bool) bool {
	v := n.get(key)
	if v == nil || v.kind != kindBool {
		return def
	}
	return v.text == "true"
}

// isTrue reports whether n is the boolean true.
func (n *value) isTrue() bool { return n != nil && n.kind == kindBool && n.text == "true" }

// strings returns the string items of an array member.
func (n *value) strings(key string) []string {
	v := n.get(key)
	if !v.isArray() {
		return nil
	}
	var out []string
	for i := range v.items {
		if v.items[i].kind == kindString {
			out = append(out, v.items[i].text)
		}
	}
	return out
}

// resolvePointer resolves a JSON pointer ("/a/b~1c", already without '#')
// within root; percent-encoding in the pointer is decoded first.
func resolvePointer(root *value, ptr string) *value {
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
