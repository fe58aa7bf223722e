package typegen

import (
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// pascal joins the ASCII letter and digit runs of s, each with its first
// letter upper-cased and the rest as it is: "get_item" and "getItem" both
// give "GetItem".
func pascal(s string) string {
	var b strings.Builder
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isASCIIAlnum(c) {
			start = true
			continue
		}
		if start && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
		start = false
	}
	return b.String()
}

// typeIdent makes a PascalCase word a usable type name: never empty, never
// starting with a digit.
func typeIdent(s string) string {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return "T" + s
	}
	return s
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isPlainKey reports whether a property key can be emitted unquoted: an
// ASCII identifier that is not a reserved word (the sandbox's own list).
func isPlainKey(s string) bool {
	if s == "" || connectors.IsReserved(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIIAlnum(c) || c == '_' || c == '$') || (i == 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// propertyKey returns s as a property name: bare when it is a plain
// identifier, else a quoted string literal.
func propertyKey(s string) string {
	if isPlainKey(s) {
		return s
	}
	return compactJSON(s)
}

// namer hands out unique type names within one output.
type namer struct {
	taken map[string]bool
	// next is, for each base that has been given a numeric suffix, the
	// suffix to try first: names are never given back, so those below it
	// stay taken, and n names on one base (method names that are all
	// CJK, which pascal drops, share the connector's) cost n tries, not
	// n²/2.
	next map[string]int
}

// newNamer returns a namer that holds reserved as taken.
func newNamer(reserved []string) namer {
	n := namer{taken: map[string]bool{}, next: map[string]int{}}
	for _, r := range reserved {
		n.taken[r] = true
	}
	return n
}

// libNames is libTypeNames as a set.
var libNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(libTypeNames) {
		m[n] = true
	}
	return m
}()

// free reports whether name is neither taken nor a standard library type.
func (n namer) free(name string) bool {
	return !n.taken[name] && !libNames[name]
}

// unique takes base, or base2, base3, … when base is not free.
func (n namer) unique(base string) string {
	name := base
	for i := max(2, n.next[base]); !n.free(name); i++ {
		name = base + strconv.Itoa(i)
		n.next[base] = i + 1
	}
	n.taken[name] = true
	return name
}

// methodPrefixes returns the type-name prefix of each method: PascalCase
// of connector and method ("everything", "get_sum" -> "EverythingGetSum"),
// unique within the connector and against the names already taken: the
// first method with a given plain prefix keeps it, later ones get the
// first free numeric suffix that is not also another method's plain
// prefix (get_item, getItem, get_item2 -> GetItem, GetItem3, GetItem2).
// It reserves each prefix's Input and Output names.
func (n namer) methodPrefixes(connector string, methods []connectors.Tool) []string {
	plain := make([]string, len(methods))
	isPlain := map[string]bool{}
	for i, m := range methods {
		plain[i] = typeIdent(pascal(connector) + pascal(m.Name))
		isPlain[plain[i]] = true
	}
	usable := func(p string) bool {
		return n.free(p+"Input") && n.free(p+"Output")
	}
	out := make([]string, len(methods))
	next := map[string]int{} // as namer.next, for these prefixes
	for i, base := range plain {
		p := base
		if !usable(p) { // taken by an earlier method too: its Input is
			for k := max(2, next[base]); ; k++ {
				p = base + strconv.Itoa(k)
				if !isPlain[p] && usable(p) {
					next[base] = k + 1
					break
				}
			}
		}
		n.taken[p+"Input"] = true
		n.taken[p+"Output"] = true
		out[i] = p
	}
	return out
}
