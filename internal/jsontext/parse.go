// Package jsontext parses JSON text into values its caller builds: one
// recursive-descent grammar for the truncation of results
// (internal/truncate), for building a program's values directly in the
// VM (sandbox) and for laying out logged values on the console's pages.
package jsontext

import (
	"slices"
	"strconv"
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
	p := parser[V]{b: b, max: maxDepth, bld: bld}
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
	// keys and vals are stacks the members and items of the arrays and
	// objects being parsed are gathered on; each array or object gets
	// exact-size slices of its own when it ends, so parsing allocates once
	// per array or object instead of growing a slice for each.
	keys []string
	vals []V
}

func (p *parser[V]) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
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
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return zero, false
		}
		return p.bld.String(s), true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	rest := p.b[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.i += 4
		return p.bld.Bool(true), true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.i += 5
		return p.bld.Bool(false), true
	case len(rest) >= 4 && string(rest[:4]) == "null":
		p.i += 4
		return p.bld.Null(), true
	}
	return zero, false
}

func (p *parser[V]) object(depth int) (V, bool) {
	var zero V
	if depth > p.max {
		return zero, false
	}
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return p.bld.Object(nil, nil)
	}
	kmark, vmark := len(p.keys), len(p.vals)
	defer func() { p.keys = p.keys[:kmark]; p.popVals(vmark) }()
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return zero, false
		}
		key, ok := p.str()
		if !ok {
			return zero, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return zero, false
		}
		p.i++
		v, ok := p.value(depth)
		if !ok {
			return zero, false
		}
		p.keys, p.vals = append(p.keys, key), append(p.vals, v)
		if end, ok := p.next('}'); !ok {
			return zero, false
		} else if end {
			return p.bld.Object(slices.Clone(p.keys[kmark:]), slices.Clone(p.vals[vmark:]))
		}
	}
}

func (p *parser[V]) array(depth int) (V, bool) {
	var zero V
	if depth > p.max {
		return zero, false
	}
	p.i++ // [
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return p.bld.Array(nil), true
	}
	mark := len(p.vals)
	defer p.popVals(mark)
	for {
		v, ok := p.value(depth)
		if !ok {
			return zero, false
		}
		p.vals = append(p.vals, v)
		if end, ok := p.next(']'); !ok {
			return zero, false
		} else if end {
			return p.bld.Array(slices.Clone(p.vals[mark:])), true
		}
	}
}

// popVals drops the values gathered since mark, clearing them so that
// what they hold can be collected.
func (p *parser[V]) popVals(mark int) {
	clear(p.vals[mark:])
	p.vals = p.vals[:mark]
}

// next reads what follows a member or item: a comma (end false) or the
// closing bracket (end true); ok is false for anything else.
func (p *parser[V]) next(closing byte) (end, ok bool) {
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

// ParseFloat is a Number helper: the float64 of a number's text, false when
// it is out of range.
func ParseFloat(text []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}

// unquote decodes the inside of a JSON string that has escapes or
// non-ASCII bytes, as encoding/json does: invalid UTF-8 and invalid UTF-16
// surrogates become U+FFFD. ok is false for an invalid escape.
func unquote(s []byte) (string, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return "", false
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
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(out), true
}

// hex4 reads the four hexadecimal digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
