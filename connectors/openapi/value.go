package openapi

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
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

// kindName names a JSON type in errors.
func kindName(k valueKind) string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

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
	return value{kind: kindBool, text: strconv.FormatBool(b)}
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

// at returns the member key of an object, null when it has none.
func (n *value) at(key string) value {
	if m := n.get(key); m != nil {
		return *m
	}
	return value{}
}

// isObject, isArray and isString report n's kind (false for nil).
func (n *value) isObject() bool { return n != nil && n.kind == kindObject }
func (n *value) isArray() bool  { return n != nil && n.kind == kindArray }
func (n *value) isString() bool { return n != nil && n.kind == kindString }

// getText returns the text of member key when it is a string, or "".
func (n *value) getText(key string) string {
	if m := n.get(key); m.isString() {
		return m.text
	}
	return ""
}

// getBool returns member key when it is a boolean, else def.
func (n *value) getBool(key string, def bool) bool {
	if m := n.get(key); m != nil && m.kind == kindBool {
		return m.text == "true"
	}
	return def
}

// isTrue reports whether n is the boolean true.
func (n *value) isTrue() bool { return n != nil && n.kind == kindBool && n.text == "true" }

// strings returns the string items of an array member.
func (n *value) strings(key string) []string {
	var out []string
	if v := n.get(key); v.isArray() {
		for _, it := range v.items {
			if it.kind == kindString {
				out = append(out, it.text)
			}
		}
	}
	return out
}

// resolvePointer resolves a JSON pointer ("/a/b~1c", already without '#',
// percent-encoding allowed) within root.
func resolvePointer(root *value, ptr string) *value {
	toks, ok := jsonref.Tokens(ptr)
	if !ok {
		return nil
	}
	cur := root
	for _, tok := range toks {
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

// scalar reports whether v is a string, number or boolean.
func (v value) scalar() bool {
	return v.kind == kindString || v.kind == kindNumber || v.kind == kindBool
}

// String returns v as parameter text: a scalar's text, anything else as
// JSON.
func (v value) String() string {
	if v.scalar() {
		return v.text
	}
	return string(v.appendJSON(nil))
}

// appendJSON appends v as compact JSON.
func (v value) appendJSON(b []byte) []byte {
	b, _ = v.appendJSONWithin(b, math.MaxInt)
	return b
}

// appendJSONWithin appends v as compact JSON while b stays within limit
// bytes; past it, it stops (ok false), so that measuring a large value
// against a bound costs the bound, not the value.
func (v value) appendJSONWithin(b []byte, limit int) (_ []byte, ok bool) {
	switch v.kind {
	case kindNull:
		b = append(b, "null"...)
	case kindBool, kindNumber:
		b = append(b, v.text...)
	case kindString:
		if len(b)+len(v.text) > limit { // written, it would be longer
			return b, false
		}
		b = appendString(b, v.text)
	case kindArray:
		b = append(b, '[')
		for i, it := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = it.appendJSONWithin(b, limit); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	default:
		o := obj{b: b}
		for i, k := range v.keys {
			if len(o.b)+len(k) > limit {
				return o.b, false
			}
			o.key(k)
			if o.b, ok = v.items[i].appendJSONWithin(o.b, limit); !ok {
				return o.b, false
			}
		}
		b = o.done()
	}
	return b, len(b) <= limit
}

// binary returns v as a Binary (content decoded) when v is an object with
// a string base64 member and no members other than Binary's; ok is false
// for any other value. err reports a Binary whose base64 or other members
// are malformed.
func (v value) binary() (b Binary, content []byte, ok bool, err error) {
	data := v.get("base64")
	if !data.isString() || slices.ContainsFunc(v.keys, func(k string) bool { return k != "base64" && k != "filename" && k != "mediaType" }) {
		return Binary{}, nil, false, nil
	}
	if content, err = decodeBase64(data.text); err != nil {
		return Binary{}, nil, true, err
	}
	for _, k := range []string{"filename", "mediaType"} {
		if m := v.at(k); m.kind != kindNull && m.kind != kindString {
			return Binary{}, nil, true, fmt.Errorf("%s must be a string", k)
		}
	}
	return Binary{MediaType: v.getText("mediaType"), Filename: v.getText("filename")}, content, true, nil
}

// decodeBase64 decodes standard base64, and also its unpadded and URL-safe
// variants, which programs that build base64 by hand produce.
func decodeBase64(s string) ([]byte, error) {
	var first error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("base64: %w", first)
}

// appendString appends s as a JSON string, without HTML escaping.
var appendString = jsontext.AppendStringNoHTML

// obj writes one JSON object member by member.
type obj struct {
	b []byte
	n int
}

func (o *obj) key(k string) {
	if o.n == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

// raw adds a member whose value is JSON text.
func (o *obj) raw(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, v...)
}

// str adds a string member.
func (o *obj) str(k, v string) {
	o.key(k)
	o.b = appendString(o.b, v)
}

// done closes the object and returns it ("{}" when empty).
func (o *obj) done() []byte {
	if o.n == 0 {
		return append(o.b, '{', '}')
	}
	return append(o.b, '}')
}
