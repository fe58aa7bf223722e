package openapi

import (
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

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
