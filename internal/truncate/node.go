package truncate

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// kind is the kind of a node.
type kind uint8

const (
	kindLit  kind = iota + 1 // null, true, false: kept as they are
	kindNum                  // a number literal; a very long one is cut like a string
	kindStr                  // a string
	kindArr                  // an array
	kindObj                  // an object
	kindLogs                 // console lines: an array of strings with the log marker
)

// maxNumber is the longest number literal kept whole whatever the budget;
// longer ones (no JavaScript number is) can be cut like strings.
const maxNumber = 40

// node is a parsed JSON value with its measure. Nodes are never modified
// once measured; fit builds new ones.
type node struct {
	kind kind
	text string // kindLit, kindNum: the literal; kindStr: the string
	keys []string
	kids []*node
	// keySizes[i] is the measure of keys[i] with its quotes and colon.
	keySizes []int
	// dropped counts entries of an array, object or logs node that are not
	// in kids and are represented by the marker entry.
	dropped int
	// markerKey is the key of an object's marker entry.
	markerKey string

	size int // the measure of the value
	min  int // the smallest measure fit can reach
}

func litNode(k kind, lit string) *node {
	n := &node{kind: k, text: lit, size: len(lit), min: len(lit)}
	if k == kindNum && len(lit) > maxNumber {
		n.min = min(n.size, stringMinSize(len(lit)))
	}
	return n
}

func stringNode(s string) *node {
	n := &node{kind: kindStr, text: s, size: strSize(s)}
	n.min = min(n.size, stringMinSize(utf8.RuneCountInString(s)))
	return n
}

// measureSeq sets the size and min of an array, object or logs node from
// its kids, keys and dropped count.
func (n *node) measureSeq() {
	size := 2 + n.overhead(len(n.kids), n.dropped)
	for i, k := range n.kids {
		size += n.keySize(i) + k.size
	}
	n.size = size
	n.min = size
	if total := len(n.kids) + n.dropped; len(n.kids) > 0 {
		n.min = min(size, 2+n.markerSize(total))
	}
}

// overhead is the measure of the commas and the marker entry of a node of
// n's kind that keeps kept entries and drops dropped.
func (n *node) overhead(kept, dropped int) int {
	entries, o := kept, 0
	if dropped > 0 {
		entries, o = kept+1, n.markerSize(dropped)
	}
	return o + max(entries-1, 0)
}

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
func (n *node) markerValue(d int) string {
	m := markers[n.kind]
	return m.before + strconv.Itoa(d) + short.Plural(d, m.one, m.many)
}

// markerSize is the measure of the marker entry standing for d dropped
// entries (for an object: key, colon and value), counted without making
// it: the texts are ASCII but for "…", one character.
func (n *node) markerSize(d int) int {
	m := markers[n.kind]
	size := 2 + utf8.RuneCountInString(m.before) + len(strconv.Itoa(d)) + len(short.Plural(d, m.one, m.many))
	if n.kind == kindObj {
		size += strSize(n.markerKey) + 1
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
	return 3 + len("[truncated ") + len(strconv.Itoa(runes)) + len(" chars]")
}

// objectMarkerKey returns a key for the marker entry that is not one of
// keys: "…", or more of them.
func objectMarkerKey(keys []string) string {
	k := "…"
	for slices.Contains(keys, k) {
		k += "…"
	}
	return k
}

// strSize is the measure of s as a JSON string, quotes included.
func strSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		n += jsontext.CharLen(r, size)
		i += size
	}
	return n
}
