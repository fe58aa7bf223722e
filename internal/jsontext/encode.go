package jsontext

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json.Marshal
// writes it (HTML-escaped, invalid UTF-8 as \ufffd, U+2028/2029 escaped).
func AppendString(b []byte, s string) []byte { return appendString(b, s, &safe) }

// AppendStringNoHTML is AppendString without HTML escaping: <, > and &
// are written as they are (as an encoding/json Encoder with
// SetEscapeHTML(false) writes them), for text sent to other programs.
func AppendStringNoHTML(b []byte, s string) []byte { return appendString(b, s, &safeNoHTML) }

func appendString(b []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
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

// Safe reports whether encoding/json (and AppendString) writes the ASCII
// byte b as it is in a string: with HTML escaping, its default, not ", \,
// <, >, & or a control character.
func Safe(b byte) bool { return b < utf8.RuneSelf && safe[b] }

var safe, safeNoHTML = safeBytes(`"\<>&`), safeBytes(`"\`)

// safeBytes marks the printable ASCII bytes but those of escaped.
func safeBytes(escaped string) (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = !strings.ContainsRune(escaped, rune(b))
	}
	return t
}
