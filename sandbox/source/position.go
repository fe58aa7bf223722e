package source

import (
	"errors"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/go-sourcemap/sourcemap"
)

// positionMap maps positions in a Normalized program's source back to the
// model's code. The chain is: final source -(minus finalPrefix, one line)->
// esbuild's output -(esbuild's source map)-> esbuild's input, whose line 1
// is wrapPrefix and whose following lines are the model's code line for
// line (fence removal keeps lines and columns).
type positionMap struct {
	// fixed at creation; read-only afterwards
	src        string // the final source
	lineStarts []int
	outEnd     int // where esbuild's output ends in src
	sm         *sourcemap.Consumer
	codeLines  int      // lines of the model's code
	shift      srcShift // text inserted into the model's code, if any
	marks      []u16mark
}

// u16mark is a checkpoint of src, taken every u16Every bytes: a byte
// offset (a character's start) and the UTF-16 length of src before it.
// A column is then found by scanning at most u16Every bytes, not its whole
// line: a program of one long line (a large literal) has a position per
// value on it, and scanning the line for each made its normalisation
// quadratic (minutes for a MiB).
type u16mark struct{ off, n int }

const u16Every = 256

// utf16Marks returns the checkpoints of s.
func utf16Marks(s string) []u16mark {
	marks := make([]u16mark, 0, len(s)/u16Every+1)
	n, next := 0, 0
	for i, r := range s { // an invalid byte is U+FFFD here, one unit, as in utf16Len
		if i >= next {
			marks = append(marks, u16mark{i, n})
			next = i + u16Every
		}
		n += utf16.RuneLen(r)
	}
	return marks
}

// utf16At is utf16Len(m.src[:off]).
func (m *positionMap) utf16At(off int) int {
	k := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].off > off }) - 1
	if k < 0 {
		return utf16Len(m.src[:off])
	}
	return m.marks[k].n + utf16Len(m.src[m.marks[k].off:off])
}

// srcShift is text of n UTF-16 units inserted into line (1-based) of the
// model's code before column col (0-based).
type srcShift struct {
	line, col, n int
}

// original maps a goja position (1-based line, 1-based byte column) in the
// final source.
func (m *positionMap) original(line, col int) (int, int, bool) {
	if line < 1 || line > len(m.lineStarts) || col < 1 {
		return 0, 0, false
	}
	return m.at(m.lineStarts[line-1] + col - 1)
}

// maxNameAt bounds the name nameAt returns: an error message names a
// variable, not a program's worth of characters.
const maxNameAt = 100

// nameAt returns the identifier that starts at line and col of the final
// source (as original takes them), or "".
func (m *positionMap) nameAt(line, col int) string {
	if line < 1 || line > len(m.lineStarts) || col < 1 {
		return ""
	}
	off := m.lineStarts[line-1] + col - 1
	end := off
	for end < len(m.src) && end-off <= maxNameAt {
		r, size := utf8.DecodeRuneInString(m.src[end:])
		if r != '_' && r != '$' && !unicode.IsLetter(r) && (end == off || !unicode.IsDigit(r)) {
			break
		}
		end += size
	}
	if end-off > maxNameAt {
		return ""
	}
	return m.src[off:end]
}

// at maps a byte offset of the final source to the model's code.
func (m *positionMap) at(off int) (int, int, bool) {
	if off < len(finalPrefix) || off > m.outEnd {
		return 0, 0, false
	}
	// Line li (0-based) of the final source is line li (1-based) of
	// esbuild's output: finalPrefix is one line.
	li := sort.Search(len(m.lineStarts), func(i int) bool { return m.lineStarts[i] > off }) - 1
	col16 := m.utf16At(off) - m.utf16At(m.lineStarts[li])
	_, _, l, c, ok := m.sm.Source(li, col16)
	if !ok {
		return 0, 0, false
	}
	ol := l - 1 // line 1 of esbuild's input is wrapPrefix
	if ol < 1 || ol > m.codeLines {
		return 0, 0, false
	}
	if s := m.shift; s.n > 0 && ol == s.line && c >= s.col {
		c = max(s.col, c-s.n)
	}
	return ol, c + 1, true
}

// syntaxError converts an error of goja's parser or compiler over the
// final source into a *SyntaxError at its place in the model's code.
func (m *positionMap) syntaxError(err error) error {
	var at *goja.CompilerError
	var el parser.ErrorList
	var ce *goja.CompilerSyntaxError
	var re *goja.CompilerReferenceError
	switch {
	case errors.As(err, &el) && len(el) > 0 && el[0] != nil:
		msg, p := el[0].Message, el[0].Position
		if p.Line >= 1 && p.Line <= len(m.lineStarts) && p.Column >= 1 && strings.HasPrefix(m.src[min(m.lineStarts[p.Line-1]+p.Column-1, len(m.src)):], "import") {
			// esbuild keeps import(), which goja does not parse.
			msg = "import() is not supported: connectors are globals and nothing else can be imported"
		}
		return m.located(msg, p)
	case errors.As(err, &ce):
		at = &ce.CompilerError
	case errors.As(err, &re):
		at = &re.CompilerError
	}
	if at != nil && at.File != nil {
		return m.located(at.Message, at.File.Position(at.Offset))
	}
	return &SyntaxError{Message: err.Error()}
}

// located is a *SyntaxError saying msg at p of the final source.
func (m *positionMap) located(msg string, p file.Position) *SyntaxError {
	l, c, ok := m.original(p.Line, p.Column)
	if !ok {
		return &SyntaxError{Message: msg}
	}
	return &SyntaxError{Message: msg, Line: l, Column: c}
}

// lineStarts returns the byte offset of every line of s, with goja's line
// terminators (\n, \r\n, \r, U+2028, U+2029).
func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case 0xe2:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				i += 2
				starts = append(starts, i+1)
			}
		}
	}
	return starts
}

// utf16Len is the length of s in UTF-16 code units (invalid bytes count
// one each).
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n, i = n+1, i+1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:]) // an invalid byte is U+FFFD, one unit
		n, i = n+utf16.RuneLen(r), i+size
	}
	return n
}
