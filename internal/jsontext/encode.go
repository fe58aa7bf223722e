package jsontext

import (
	"bytes"
	"encoding/json"
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
			if e := escapes[c]; e != 0 {
				b = append(b, '\\', e)
			} else {
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

// AppendChar appends one character of a string as AppendString writes
// it; r and size are as CharLen takes them.
func AppendChar(b []byte, r rune, size int) []byte {
	switch {
	case r < utf8.RuneSelf && safe[r]:
		return append(b, byte(r))
	case r < utf8.RuneSelf && escapes[r] != 0:
		return append(b, '\\', escapes[r])
	case r < utf8.RuneSelf:
		return append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	case r == utf8.RuneError && size == 1:
		return append(b, `\ufffd`...)
	case r == '\u2028' || r == '\u2029':
		return append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	return utf8.AppendRune(b, r)
}

// CharLen is how many characters AppendString writes for one character of
// a string: r is the decoded rune and size its byte length (an invalid
// byte is r utf8.RuneError, size 1). An ASCII byte is written as it is
// (1), as a backslash and a letter (2) or as \u00XX (6); invalid UTF-8 and
// U+2028/2029 as \uXXXX (6); other characters as they are (1).
func CharLen(r rune, size int) int {
	switch {
	case r >= utf8.RuneSelf:
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return 6
		}
		return 1
	case safe[r]:
		return 1
	case escapes[r] != 0:
		return 2
	}
	return 6
}

var safe, safeNoHTML = safeBytes(`"\<>&`), safeBytes(`"\`)

// escapes are the letters of the two-character escapes of ASCII bytes.
var escapes = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// safeBytes marks the printable ASCII bytes but those of escaped.
func safeBytes(escaped string) (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = !strings.ContainsRune(escaped, rune(b))
	}
	return t
}

// Marshal is json.Marshal without HTML escaping: <, > and & are written as
// they are ("<96 bytes base64>" stays readable), for text read by people
// and other programs, not embedded in HTML. It has no trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
