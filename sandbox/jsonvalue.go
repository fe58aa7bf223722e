package sandbox

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// maxJSONDepth is the nesting depth past which jsonValue leaves a value to
// JSON.parse.
const maxJSONDepth = 1000

// jsonValue builds the JavaScript value of the JSON text raw directly in
// vm, without calling into JavaScript: it is what the VM's JSON.parse
// returns for the same text (plain objects whose properties are defined
// in document order, the last of duplicate keys winning, "__proto__" an
// own property; numbers as float64; strings decoded as encoding/json
// decodes them, with U+FFFD for invalid UTF-8 and lone surrogates), but
// without JSON.parse's tokenizer, which allocates for every token. ok is
// false for text it leaves to JSON.parse: anything that is not valid JSON
// (so that the error is JSON.parse's own), numbers out of float64's range
// and nesting deeper than maxJSONDepth. It must run on the VM goroutine.
func jsonValue(vm *goja.Runtime, raw []byte) (v goja.Value, ok bool) {
	p := jsonParser{vm: vm, b: raw}
	v, ok = p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.b) {
		return nil, false
	}
	return v, true
}

// jsonParser is one run of jsonValue.
type jsonParser struct {
	vm *goja.Runtime
	b  []byte
	i  int
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (goja.Value, bool) {
	p.space()
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		return p.vm.ToValue(s), true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.literal()
	}
}

func (p *jsonParser) literal() (goja.Value, bool) {
	rest := p.b[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.i += 4
		return p.vm.ToValue(true), true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.i += 5
		return p.vm.ToValue(false), true
	case len(rest) >= 4 && string(rest[:4]) == "null":
		p.i += 4
		return goja.Null(), true
	}
	return nil, false
}

func (p *jsonParser) object(depth int) (goja.Value, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.i++ // {
	obj := p.vm.NewObject()
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return obj, true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		// A data property defined, not assigned: no setter of the
		// prototype chain runs, and "__proto__" is an own property, as
		// JSON.parse has it.
		if err := obj.DefineDataProperty(key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return obj, true
		default:
			return nil, false
		}
	}
}

func (p *jsonParser) array(depth int) (goja.Value, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.i++ // [
	var items []any
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return p.vm.NewArray(), true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		items = append(items, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return p.vm.NewArray(items...), true
		default:
			return nil, false
		}
	}
}

// number reads a number with JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (goja.Value, bool) {
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
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return nil, false
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
			return nil, false
		}
		i = j
	}
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil {
		return nil, false // out of range: JSON.parse reports it
	}
	p.i = i
	return p.vm.ToValue(f), true
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
func (p *jsonParser) str() (string, bool) {
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
