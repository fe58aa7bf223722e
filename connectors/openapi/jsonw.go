package openapi

import (
	"unicode/utf8"
)

// appendString appends s as a JSON string (quoted; invalid UTF-8 becomes
// U+FFFD; <, > and & are left as they are).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but end lines in JavaScript
		// source; escape them.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', byte('8'+r-'\u2028'))
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

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
