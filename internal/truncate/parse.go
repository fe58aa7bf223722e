package truncate

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// maxDepth bounds nesting, as encoding/json does; deeper input is treated
// as not JSON.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// parseOrString parses raw, or when it is not valid JSON makes a string of
// its text.
func parseOrString(raw []byte) *node {
	p := parser{data: raw}
	n, err := p.document()
	if err != nil {
		return stringNode(string(raw))
	}
	return n
}

// parser is a small recursive-descent JSON parser that keeps key order and
// measures as it goes.
type parser struct {
	data  []byte
	pos   int
	depth int
}

func (p *parser) document() (*node, error) {
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, errSyntax
	}
	return n, nil
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (*node, error) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, errSyntax
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return stringNode(s), nil
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, errSyntax
}

func (p *parser) literal(word string) (*node, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, errSyntax
	}
	p.pos += len(word)
	return litNode(kindLit, word), nil
}

// number scans a number per the JSON grammar.
func (p *parser) number() (*node, error) {
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	switch c := p.peek(); {
	case c == '0':
		p.pos++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return nil, errSyntax
	}
	if p.peek() == '.' {
		p.pos++
		if !isDigit(p.peek()) {
			return nil, errSyntax
		}
		p.digits()
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		if !isDigit(p.peek()) {
			return nil, errSyntax
		}
		p.digits()
	}
	return litNode(kindNum, string(p.data[start:p.pos])), nil
}

func (p *parser) peek() byte {
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

func (p *parser) digits() {
	for isDigit(p.peek()) {
		p.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// string scans a JSON string at p.pos (an opening quote) and returns its
// value. Strings without escapes are taken as they are; others (and any
// with invalid UTF-8, which becomes U+FFFD) are decoded by encoding/json.
func (p *parser) string() (string, error) {
	start := p.pos
	p.pos++
	plain := true
	for {
		if p.pos >= len(p.data) {
			return "", errSyntax
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw := p.data[start:p.pos]
			if plain && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errSyntax
			}
			return s, nil
		case c == '\\':
			plain = false
			p.pos += 2
		case c < 0x20:
			return "", errSyntax
		default:
			p.pos++
		}
	}
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errSyntax
	}
	p.pos++ // the opening bracket
	return nil
}

func (p *parser) array() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &node{kind: kindArr}
	p.space()
	if p.peek() == ']' {
		p.pos++
	} else {
		for {
			kid, err := p.value()
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
			p.space()
			c := p.peek()
			p.pos++
			if c == ']' {
				break
			}
			if c != ',' {
				return nil, errSyntax
			}
		}
	}
	p.depth--
	n.measureSeq()
	return n, nil
}

func (p *parser) object() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &node{kind: kindObj}
	p.space()
	if p.peek() == '}' {
		p.pos++
	} else {
		for {
			p.space()
			if p.peek() != '"' {
				return nil, errSyntax
			}
			key, err := p.string()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.peek() != ':' {
				return nil, errSyntax
			}
			p.pos++
			kid, err := p.value()
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key)
			n.keySizes = append(n.keySizes, strSize(key)+1)
			n.kids = append(n.kids, kid)
			p.space()
			c := p.peek()
			p.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				return nil, errSyntax
			}
		}
	}
	p.depth--
	n.markerKey = objectMarkerKey(n.keys)
	n.measureSeq()
	return n, nil
}
