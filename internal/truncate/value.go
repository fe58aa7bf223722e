package truncate

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// kind is the kind of a value.
type kind uint8

const (
	kindLit  kind = iota + 1 // null, true, false: kept as they are
	kindNum                  // a number literal; a very long one is cut like a string
	kindStr                  // a string of the JSON text
	kindLine                 // a console line: a string given as a Go string
	kindText                 // a result that is not JSON, as a string of its text
	kindArr                  // an array
	kindObj                  // an object
	kindLogs                 // console lines: an array of strings with the log marker
)

// maxNumber is the longest number literal kept whole whatever the budget;
// longer ones (no JavaScript number is) can be cut like strings.
const maxNumber = 40

// A value is one JSON value (or console line, or the lines together),
// measured but not built: its text stays where it is, in the fitter's
// JSON text or its lines, and a container's entries are read from it
// again when it is cut. So cutting holds the entries of the containers
// being cut, never the whole input.
type value struct {
	kind kind
	// pos and end delimit the value's text in the fitter's JSON text; a
	// console line is the fitter's line pos.
	pos, end int
	// key is where an object member's key (its quoted text) starts, and
	// keySize its measure with its quotes and colon.
	key, keySize int
	size         int // the measure of the value
	min          int // the smallest measure fit can reach
	// n is a string's or number's length in characters, a container's
	// count of entries, the sandbox's count of lines it dropped for logs.
	n int
	// ellipses is how many "…" the key of an object's marker entry has:
	// one more than any key of the object made of them alone has.
	ellipses int
}

// measureString sets the size and min of a string or number of n
// characters that measures size.
func (v *value) measureString(size, n int) {
	v.size, v.n = size, n
	v.min = min(size, stringMinSize(n))
	if v.kind == kindNum && n <= maxNumber {
		v.min = size
	}
}

// measureSeq sets the size and min of an array, object or logs value
// keeping entries, which measure size together (their keys included, the
// commas between them not), and dropping dropped.
func (v *value) measureSeq(entries, size, dropped int) {
	v.size = 2 + size + v.overhead(entries, dropped)
	v.min = v.size
	if entries > 0 {
		v.min = min(v.size, 2+v.markerSize(entries+dropped))
	}
}

// overhead is the measure of the commas and the marker entry of a value
// of v's kind that keeps kept entries and drops dropped.
func (v *value) overhead(kept, dropped int) int {
	entries, o := kept, 0
	if dropped > 0 {
		entries, o = kept+1, v.markerSize(dropped)
	}
	return o + max(entries-1, 0)
}

// capped is v's share of room under the cap c: its measure up to c, but
// never less than its min.
func (v *value) capped(c int) int { return min(v.size, max(v.min, c)) }

// markers are the text of the marker entry standing for d dropped entries
// of each kind of container (for an object, its value): before, d, then
// after it for one entry or for more.
var markers = [...]struct{ before, one, many string }{
	kindArr:  {"… ", " more item", " more items"},
	kindObj:  {"", " more key", " more keys"},
	kindLogs: {"… ", " more log lines truncated", " more log lines truncated"},
}

// markerValue is the text of the marker entry standing for d dropped
// entries.
func (v *value) markerValue(d int) string {
	m := markers[v.kind]
	return m.before + strconv.Itoa(d) + short.Plural(d, m.one, m.many)
}

// markerKey is the key of an object's marker entry.
func (v *value) markerKey() string { return strings.Repeat("…", v.ellipses) }

// markerSize is the measure of the marker entry standing for d dropped
// entries (for an object: key, colon and value), counted without making
// it: the texts are ASCII but for "…", one character.
func (v *value) markerSize(d int) int {
	m := markers[v.kind]
	size := 2 + utf8.RuneCountInString(m.before) + digits(d) + len(short.Plural(d, m.one, m.many))
	if v.kind == kindObj {
		size += 2 + v.ellipses + 1
	}
	return size
}

// stringMarker is the end of a cut string standing for d dropped
// characters.
func stringMarker(d int) string {
	return "…[truncated " + strconv.Itoa(d) + " chars]"
}

// stringMinSize is the measure of a string of runes characters cut to its
// marker alone: stringMarker(runes) with its quotes (they and "…" count 3).
func stringMinSize(runes int) int {
	return 3 + len("[truncated ") + digits(runes) + len(" chars]")
}

// digits is the length of strconv.Itoa(d) for d >= 0, without making it.
func digits(d int) int {
	n := 1
	for ; d >= 10; d /= 10 {
		n++
	}
	return n
}

// strSize is the measure of s as a JSON string, quotes included, and its
// length in characters.
func strSize(s string) (size, runes int) {
	size = 2
	for i := 0; i < len(s); runes++ {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		size += jsontext.CharLen(r, n)
		i += n
	}
	return size, runes
}
