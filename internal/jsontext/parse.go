// Package jsontext parses JSON text into values its caller builds: one
// recursive-descent grammar for the truncation of results
// (internal/truncate), for building a program's values directly in the
// VM (sandbox) and for laying out logged values on the console's pages.
package jsontext

import (
	"encoding/hex"
	"unicode/utf16"
	"unicode/utf8"
)

// A Builder makes the values of one parse. A method that returns false
// rejects the whole text.
type Builder[V any] interface {
	Null() V
	Bool(b bool) V
	// Number gets the number's text, valid per the JSON grammar.
	Number(text []byte) (V, bool)
	// String gets the decoded string, as encoding/json decodes it: invalid
	// UTF-8 and invalid UTF-16 surrogates become U+FFFD.
	String(s string) V
	// Array gets the items in order.
	Array(items []V) V
	// Object gets the members in document order, duplicates included.
	Object(keys []string, values []V) (V, bool)
}

// Parse parses b, which must hold one JSON value and nothing but white
// space around it. ok is false when it does not, when arrays and objects
// nest deeper than maxDepth, or when the builder rejects a part.
func Parse[V any](b []byte, maxDepth int, bld Builder[V]) (v V, ok bool) {
	p := parser[V]{b: b, max: maxDepth, bld: bld, sizes: sizes(b, maxDepth)}
	v, ok = p.value(0)
	if !ok {
		return v, false
	}
	p.space()
	return v, p.i == len(p.b)
}

type parser[V any] struct {
	b   []byte
	i   int
	max int
	bld Builder[V]
	// sizes are the item counts of the arrays and objects (see sizes), of
	// which next is the next one's: each gets slices of its size, made
	// once. Gathering the items on a stack and copying them out at the
	// end took seven times what the items take for a large array (the
	// stack grown by copies, then the copy), and 141 times the text's
	// size at the peak for "[0,0,…]" of 80-byte values.
	sizes []uint32
	next  int
}

func (p *parser[V]) space() { p.i = SkipSpace(p.b, p.i) }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value reads the value at p.i; depth is how many arrays and objects
// enclose it.
func (p *parser[V]) value(depth int) (V, bool) {
	var zero V
	p.space()
	if p.i >= len(p.b) {
		return zero, false
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		return p.container(depth+1, c == '{')
	case c == '"':
		s, ok := p.str()
		if !ok {
			return zero, false
		}
		return p.bld.String(s), true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	switch {
	case p.literal("true"):
		return p.bld.Bool(true), true
	case p.literal("false"):
		return p.bld.Bool(false), true
	case p.literal("null"):
		return p.bld.Null(), true
	}
	return zero, false
}

// literal reads word when it is at p.i.
func (p *parser[V]) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// container reads an array, or an object when keyed, whose opening
// bracket is at p.i.
func (p *parser[V]) container(depth int, keyed bool) (V, bool) {
	var zero V
	if depth > p.max {
		return zero, false
	}
	closing := byte(']')
	if keyed {
		closing = '}'
	}
	p.i++
	var keys []string
	var vals []V
	if p.next < len(p.sizes) && p.sizes[p.next] > 0 {
		// A count, not a limit: malformed text may be counted wrong.
		vals = make([]V, 0, p.sizes[p.next])
		if keyed {
			keys = make([]string, 0, p.sizes[p.next])
		}
	}
	p.next++
	p.space()
	end := p.i < len(p.b) && p.b[p.i] == closing
	if end {
		p.i++
	}
	for !end {
		if keyed {
			key, ok := p.key()
			if !ok {
				return zero, false
			}
			keys = append(keys, key)
		}
		v, ok := p.value(depth)
		if !ok {
			return zero, false
		}
		vals = append(vals, v)
		if end, ok = p.following(closing); !ok {
			return zero, false
		}
	}
	if keyed {
		return p.bld.Object(keys, vals)
	}
	return p.bld.Array(vals), true
}

// sizes counts the items (or members) of each array and object of b, in
// the order they open, down to maxDepth levels (the parser stops there).
// It reads b as JSON without checking it: of malformed text the counts
// may be wrong, and the parser rejects it anyway.
func sizes(b []byte, maxDepth int) []uint32 {
	var counts []uint32
	var open []int // the indexes in counts of the enclosing arrays and objects
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case ',':
			if len(open) > 0 {
				counts[open[len(open)-1]]++
			}
			continue
		case ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			continue
		}
		// Anything else is within an item: the first item, when none
		// was counted.
		if len(open) > 0 && counts[open[len(open)-1]] == 0 {
			counts[open[len(open)-1]] = 1
		}
		switch c {
		case '[', '{':
			if len(open) >= maxDepth {
				return counts
			}
			open = append(open, len(counts))
			counts = append(counts, 0)
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return counts
}

// key reads an object member's key and the colon after it.
func (p *parser[V]) key() (string, bool) {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	key, ok := p.str()
	p.space()
	if !ok || p.i >= len(p.b) || p.b[p.i] != ':' {
		return "", false
	}
	p.i++
	return key, true
}

// following reads what follows a member or item: a comma (end false) or
// the closing bracket (end true); ok is false for anything else.
func (p *parser[V]) following(closing byte) (end, ok bool) {
	p.space()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, true
	case closing:
		p.i++
		return true, true
	}
	return false, false
}

// number reads a number with JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser[V]) number() (V, bool) {
	var zero V
	b, start := p.b, p.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return zero, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return zero, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return zero, false
		}
		i = j
	}
	p.i = i
	return p.bld.Number(b[start:i])
}

// digits returns the index past the decimal digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// str reads a string. One without escapes, whose bytes are valid UTF-8, is
// taken as it is; others are decoded by unquote.
func (p *parser[V]) str() (string, bool) {
	b := p.b
	start := p.i + 1
	escaped, ascii := false, true
	for i := start; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			s := b[start:i]
			if !escaped && (ascii || utf8.Valid(s)) {
				return string(s), true
			}
			return unquote(s)
		case c == '\\':
			escaped = true
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// unquote decodes the inside of a JSON string that has escapes or
// non-ASCII bytes, as encoding/json does (see DecodeChar). ok is false for
// an invalid escape.
func unquote(s []byte) (string, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, next, ok := DecodeChar(s, i)
		if !ok {
			return "", false
		}
		out = utf8.AppendRune(out, r)
		i = next
	}
	return string(out), true
}

// DecodeChar decodes the character at s[i:] of a JSON string's inside (s
// holds no closing quote before it) as encoding/json decodes it: an escape
// (a high and a low surrogate escaped one after the other are one
// character), a UTF-8 character, and invalid UTF-8 or an invalid UTF-16
// surrogate as U+FFFD. It returns the character and the index after it;
// ok is false for an invalid escape.
func DecodeChar(s []byte, i int) (r rune, next int, ok bool) {
	c := s[i]
	switch {
	case c < utf8.RuneSelf && c != '\\':
		return rune(c), i + 1, true
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRune(s[i:])
		return r, i + size, true // an invalid byte is RuneError, size 1
	case i+1 >= len(s):
		return 0, 0, false
	}
	switch e := s[i+1]; {
	case unescapes[e] != 0:
		return rune(unescapes[e]), i + 2, true
	case e != 'u':
		return 0, 0, false
	}
	r, ok = hex4(s[i+2:])
	if !ok {
		return 0, 0, false
	}
	i += 6
	if utf16.IsSurrogate(r) {
		// A high surrogate followed by an escaped low one is one
		// character; any other surrogate is U+FFFD.
		r2, ok := rune(-1), false
		if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
			r2, ok = hex4(s[i+2:])
		}
		if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
			return d, i + 6, true
		}
		return utf8.RuneError, i, true
	}
	return r, i, true
}

// unescapes are the bytes of the two-character escapes but \u, by their
// letter.
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hexadecimal digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var h [2]byte
	_, err := hex.Decode(h[:], b[:4])
	return rune(h[0])<<8 | rune(h[1]), err == nil
}
