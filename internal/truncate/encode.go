package truncate

import (
	"encoding/json"
	"unicode/utf8"
)

// encode writes n as compact JSON, strings escaped as encoding/json escapes
// them, so its length in characters is n.size.
func encode(n *node) json.RawMessage {
	return appendNode(make([]byte, 0, n.size+n.size/4), n)
}

// encodeLogs returns the lines of a logs node, its marker last.
func encodeLogs(n *node) []string {
	out := make([]string, 0, len(n.kids)+1)
	for _, k := range n.kids {
		out = append(out, k.str)
	}
	if n.dropped > 0 {
		out = append(out, n.markerValue(n.dropped))
	}
	return out
}

func appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case kindLit, kindNum:
		return append(b, n.lit...)
	case kindStr:
		return appendString(b, n.str)
	case kindObj:
		b = append(b, '{')
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, n.keys[i])
			b = append(b, ':')
			b = appendNode(b, k)
		}
		if n.dropped > 0 {
			if len(n.kids) > 0 {
				b = append(b, ',')
			}
			b = appendString(b, n.markerKey)
			b = append(b, ':')
			b = appendString(b, n.markerValue(n.dropped))
		}
		return append(b, '}')
	default: // kindArr, kindLogs
		b = append(b, '[')
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, k)
		}
		if n.dropped > 0 {
			if len(n.kids) > 0 {
				b = append(b, ',')
			}
			b = appendString(b, n.markerValue(n.dropped))
		}
		return append(b, ']')
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json.Marshal
// writes it (HTML-escaped, invalid UTF-8 as \ufffd, U+2028/2029 escaped).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
