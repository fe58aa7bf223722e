package openapi

import (
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// appendString appends s as a JSON string (as encoding/json writes it).
var appendString = jsontext.AppendString

// appendNode appends n as JSON.
func appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case kNull:
		return append(b, "null"...)
	case kBool, kNumber:
		return append(b, n.str...)
	case kString:
		return appendString(b, n.str)
	case kArray:
		b = append(b, '[')
		for i := range n.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, &n.items[i])
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, &n.vals[i])
		}
		return append(b, '}')
	}
}

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
