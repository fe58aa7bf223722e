package truncate

import (
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// What fit appends is compact JSON, strings escaped as encoding/json
// escapes them, so its length in characters is the measure fit counted.

// appendWhole appends v whole.
func (f *fitter) appendWhole(v value) {
	switch v.kind {
	case kindStr:
		f.appendString(v.pos)
	case kindText:
		f.out = f.appendChars(append(f.out, '"'), v, 0, len(f.src))
		f.out = append(f.out, '"')
	default: // without its white space, its strings escaped again
		for i := v.pos; i < v.end; {
			switch c := f.src[i]; c {
			case '"':
				i = f.appendString(i)
			case ' ', '\t', '\n', '\r':
				i++
			default:
				f.out = append(f.out, c)
				i++
			}
		}
	}
}

// appendString appends the string quoted at f.src[i:] and returns the
// index past its closing quote.
func (f *fitter) appendString(i int) int {
	f.out = append(f.out, '"')
	j := i + 1
	for f.src[j] != '"' {
		var r rune
		r, j, _ = jsontext.DecodeChar(f.src, j)
		f.out = jsontext.AppendChar(f.out, r, utf8.RuneLen(r)) // decoded: U+FFFD is a character
	}
	f.out = append(f.out, '"')
	return j + 1
}

// appendMinimal appends v's smallest form: a container's marker alone, a
// string's (or very long number's) marker alone.
func (f *fitter) appendMinimal(v value) {
	switch v.kind {
	case kindArr, kindObj: // between its brackets
		f.out = append(f.out, f.src[v.pos])
		f.appendMarker(v, v.n)
		f.out = append(f.out, f.src[v.end-1])
	default:
		f.out = append(append(append(f.out, '"'), stringMarker(v.n)...), '"')
	}
}

// appendMarker appends the marker entry of v standing for d dropped
// entries: for an object, its key, a colon and its value.
func (f *fitter) appendMarker(v value, d int) {
	if v.kind == kindObj {
		f.out = append(jsontext.AppendString(f.out, v.markerKey()), ':')
	}
	f.out = jsontext.AppendString(f.out, v.markerValue(d))
}

// appendHead appends the head of the string (or number, or text) v that
// fits b, which exceeds its marker-only measure, and the marker counting
// the characters dropped.
func (f *fitter) appendHead(b []byte, v value, budget int) []byte {
	start, _ := f.span(v)
	end, kept := f.head(v, budget)
	b = f.appendChars(b, v, start, end)
	return append(b, stringMarker(v.n-kept)...)
}

// cutLine returns the console line v cut to b.
func (f *fitter) cutLine(v value, b int) string {
	s := f.lines[v.pos]
	switch {
	case v.size <= b || v.min >= v.size:
		return s
	case b <= v.min:
		return stringMarker(v.n)
	}
	end, kept := f.head(v, b)
	return s[:end] + stringMarker(v.n-kept)
}

// head returns where the head of the string (number, text, line) v that
// fits b with its marker ends, and its length in characters.
func (f *fitter) head(v value, b int) (end, kept int) {
	// The marker of the whole length is at least as long as the final one.
	avail := b - stringMinSize(v.n)
	used := 0
	i, end := f.span(v)
	for i < end {
		r, size, next := f.char(v, i)
		c := jsontext.CharLen(r, size)
		if used+c > avail {
			break
		}
		used += c
		i = next
		kept++
	}
	return i, kept
}

// span returns where the characters of the string (number, text, line) v
// start and end.
func (f *fitter) span(v value) (start, end int) {
	switch v.kind {
	case kindStr:
		return v.pos + 1, v.end - 1
	case kindLine:
		return 0, len(f.lines[v.pos])
	}
	return v.pos, v.end
}

// char decodes the character of v at i: the rune, its size as CharLen
// takes it, and the index past it.
func (f *fitter) char(v value, i int) (r rune, size, next int) {
	switch v.kind {
	case kindStr:
		if c := f.src[i]; c < utf8.RuneSelf && c != '\\' {
			return rune(c), 1, i + 1
		}
		r, next, _ = jsontext.DecodeChar(f.src, i)
		return r, utf8.RuneLen(r), next // decoded: U+FFFD is a character
	case kindLine:
		r, size = utf8.DecodeRuneInString(f.lines[v.pos][i:])
		return r, size, i + size
	case kindText: // a JSON string of it decoded: an invalid byte is U+FFFD
		r, size = utf8.DecodeRune(f.src[i:])
		return r, utf8.RuneLen(r), i + size
	}
	return rune(f.src[i]), 1, i + 1 // a number's
}

// appendChars appends the characters of v from i to end, escaped.
func (f *fitter) appendChars(b []byte, v value, i, end int) []byte {
	for i < end {
		r, size, next := f.char(v, i)
		b = jsontext.AppendChar(b, r, size)
		i = next
	}
	return b
}
