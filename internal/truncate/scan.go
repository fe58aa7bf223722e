package truncate

import (
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// maxDepth bounds nesting, as encoding/json does; deeper input is treated
// as not JSON.
const maxDepth = 10000

// A fitter cuts one result and its console lines. The result's text is
// valid JSON (Fit checks it first), so scanning it needs no error paths
// but nesting.
type fitter struct {
	src     []byte   // the result's JSON text
	lines   []string // the console lines, the sandbox's marker taken off
	dropped int      // lines the sandbox dropped, by its marker
	out     []byte   // the cut result
	// kids is a stack: each container being cut gathers the entries it
	// considers above its mark and keeps those it keeps while it cuts
	// them.
	kids []value
	// While thr is set, scan gathers in rec the values it measures whose
	// text is longer than thr: when thr is half a container's length they
	// are nested, one chain down from the container (see fitter.plan).
	thr int
	rec []value
}

// scan measures the value at f.src[i:] (after white space), within depth
// enclosing arrays and objects; ok is false when it nests deeper than
// maxDepth. It allocates nothing but for objects with a key made of "…"
// alone.
func (f *fitter) scan(i, depth int) (v value, ok bool) {
	i = jsontext.SkipSpace(f.src, i)
	v.pos = i
	switch c := f.src[i]; c {
	case '"':
		v.kind = kindStr
		var size, n int
		size, n, v.end = f.scanString(i)
		v.measureString(size, n)
	case '[', '{':
		if depth >= maxDepth {
			return v, false
		}
		if v, ok = f.scanSeq(i, depth+1); !ok {
			return v, false
		}
	case 't', 'f', 'n':
		v.kind, v.end = kindLit, i+4
		if c == 'f' {
			v.end++
		}
		v.size, v.min = v.end-i, v.end-i
	default:
		j := i + 1
		for j < len(f.src) && (f.src[j] >= '0' && f.src[j] <= '9' || f.src[j] == '.' || f.src[j] == 'e' || f.src[j] == 'E' || f.src[j] == '+' || f.src[j] == '-') {
			j++
		}
		v.kind, v.end = kindNum, j
		v.measureString(j-i, j-i)
	}
	if v.end-v.pos > f.thr {
		f.rec = append(f.rec, v)
	}
	return v, true
}

// scanString measures the string whose opening quote is at f.src[i]: its
// measure, its length in characters (as encoding/json decodes it) and the
// index past its closing quote.
func (f *fitter) scanString(i int) (size, n, end int) {
	size = 2
	for j := i + 1; ; n++ {
		c := f.src[j]
		switch {
		case c == '"':
			return size, n, j + 1
		case c < utf8.RuneSelf && c != '\\':
			size += jsontext.CharLen(rune(c), 1)
			j++
		default:
			var r rune
			r, j, _ = jsontext.DecodeChar(f.src, j)
			size += jsontext.CharLen(r, utf8.RuneLen(r)) // decoded: U+FFFD is a character
		}
	}
}

// scanSeq measures the array or object whose bracket is at f.src[i].
func (f *fitter) scanSeq(i, depth int) (value, bool) {
	v := value{kind: kindArr, pos: i}
	closing := byte(']')
	if f.src[i] == '{' {
		v.kind, closing = kindObj, '}'
	}
	var ellipses map[int]bool // the keys made of "…" alone, by their count
	entries, size := 0, 0
	j := jsontext.SkipSpace(f.src, i+1)
	for f.src[j] != closing {
		if v.kind == kindObj {
			ks, _, kend := f.scanString(j)
			size += ks + 1
			if e := f.ellipses(j, kend); e > 0 {
				if ellipses == nil {
					ellipses = map[int]bool{}
				}
				ellipses[e] = true
			}
			j = jsontext.SkipSpace(f.src, kend) + 1 // the colon
		}
		kid, ok := f.scan(j, depth)
		if !ok {
			return v, false
		}
		size += kid.size
		entries++
		if j = jsontext.SkipSpace(f.src, kid.end); f.src[j] == ',' {
			j = jsontext.SkipSpace(f.src, j+1)
		}
	}
	v.end = j + 1
	for v.ellipses = 1; ellipses[v.ellipses]; v.ellipses++ {
	}
	v.n = entries
	v.measureSeq(entries, size, 0)
	return v, true
}

// ellipses is how many "…" the key quoted at f.src[i:end] is made of; 0
// when it has anything else, or nothing.
func (f *fitter) ellipses(i, end int) int {
	if c := f.src[i+1]; c != 0xe2 && c != '\\' { // "…" is e2 80 a6, or an escape
		return 0
	}
	n := 0
	for j := i + 1; j < end-1; n++ {
		var r rune
		if r, j, _ = jsontext.DecodeChar(f.src, j); r != '…' {
			return 0
		}
	}
	return n
}
