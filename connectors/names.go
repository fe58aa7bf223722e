package connectors

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// ReservedEnvPrefix starts the names of codemode-mcp's own environment
// variables (CODEMODE_TOKEN, CODEMODE_CONFIG, …), which a downstream never
// inherits: the server's bearer token must not reach a program through a
// downstream that echoes its environment.
const ReservedEnvPrefix = "CODEMODE_"

// reserved lists JavaScript reserved words and the sandbox's own globals and
// well-known built-ins that a connector or method must not shadow.
var reserved = wordSet(`
	break case catch class const continue debugger default delete do else enum
	export extends false finally for function if import in instanceof new null
	return super switch this throw true try typeof var void while with yield
	let static implements interface package private protected public await
	async arguments eval undefined NaN Infinity`)

// jsGlobals are globals of the sandbox that a connector name must not replace.
var jsGlobals = wordSet(`
	codemode console globalThis Object Array String Number Boolean Symbol BigInt
	Math JSON Date RegExp Error TypeError RangeError SyntaxError ReferenceError
	EvalError URIError AggregateError Promise Map Set WeakMap WeakSet WeakRef
	Proxy Reflect Function ArrayBuffer DataView Int8Array Uint8Array
	Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float32Array
	Float64Array BigInt64Array BigUint64Array parseInt parseFloat isNaN isFinite
	encodeURI encodeURIComponent decodeURI decodeURIComponent escape unescape
	setTimeout clearTimeout setInterval clearInterval`)

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// IsReserved reports whether s is a JavaScript reserved word (or a name
// such as undefined or eval that must not be bound).
func IsReserved(s string) bool { return reserved[s] }

// IsIdentifier reports whether s is a valid JavaScript identifier that is not
// a reserved word.
func IsIdentifier(s string) bool {
	if s == "" || reserved[s] {
		return false
	}
	for i, r := range s {
		if !isIdentRune(r, i == 0) {
			return false
		}
	}
	return true
}

// isIdentRune reports whether r may appear in a JavaScript identifier
// (first: at its start).
func isIdentRune(r rune, first bool) bool {
	if r == '_' || r == '$' || unicode.IsLetter(r) {
		return true
	}
	return !first && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r))
}

// ValidateConnectorName returns an error saying why name cannot be a
// connector's global name in the sandbox, or nil.
//
// A dotted name ("github.issues") is a connector inside a namespace: the
// program reaches it as github.issues.method(…). Each dot-separated segment
// must be an identifier; the first, the global itself, must not be
// codemode or a JavaScript global. Whether a name is also the namespace of
// another connector is a property of the whole set (see NamespaceConflict).
func ValidateConnectorName(name string) error {
	if name == "" {
		return fmt.Errorf("connector name is empty")
	}
	segs := strings.Split(name, ".")
	for _, s := range segs {
		if s == "" {
			return fmt.Errorf("connector name %q has an empty segment: dots separate namespaces, as in \"github.issues\"", name)
		}
	}
	root := segs[0]
	of := ""
	if len(segs) > 1 {
		of = fmt.Sprintf(" (in connector name %q)", name)
	}
	switch {
	case root == "codemode":
		return fmt.Errorf("connector name %q is reserved for the sandbox's own API%s", root, of)
	case jsGlobals[root]:
		return fmt.Errorf("connector name %q would shadow the JavaScript global %s%s", root, root, of)
	}
	for _, s := range segs {
		switch {
		case reserved[s]:
			return fmt.Errorf("connector name %q is a JavaScript reserved word%s", s, of)
		case s == "__proto__":
			return fmt.Errorf("connector name %q would replace an object's prototype%s", s, of)
		case !IsIdentifier(s):
			return fmt.Errorf("connector name %q is not a valid JavaScript identifier (letters, digits, _ and $; not starting with a digit)%s; try %q", s, of, namespacedIdentifier(name))
		}
	}
	return nil
}

// namespacedIdentifier is Identifier applied to each dot-separated segment
// of name ("my-org.issues" -> "my_org.issues"); empty segments become "_".
func namespacedIdentifier(name string) string {
	segs := strings.Split(name, ".")
	for i, s := range segs {
		segs[i] = Identifier(s)
	}
	return strings.Join(segs, ".")
}

// NamespaceConflict finds a name of names that is also the namespace of
// another ("github" and "github.issues"): the sandbox cannot make github
// both a connector and the object holding github.issues. It returns the
// first name in order that lies under another name (nested) and that name
// (leaf); ok is false when there is none. Names are compared as given
// (validate them first); duplicates are not conflicts here.
func NamespaceConflict(names []string) (leaf, nested string, ok bool) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			if n[i] == '.' && set[n[:i]] {
				return n[:i], n, true
			}
		}
	}
	return "", "", false
}

// Identifier turns a source name into a JavaScript identifier: characters
// that cannot appear in one become '_' ("get-sum" -> "get_sum"), a leading
// digit, a reserved word or __proto__ (which, set on the connector's
// object, would replace its prototype rather than add a method) gets a '_'
// prefix.
func Identifier(name string) string {
	var b strings.Builder
	for i, r := range name {
		if isIdentRune(r, i == 0) || (i == 0 && unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		return "_"
	}
	if r := []rune(s)[0]; unicode.IsDigit(r) || reserved[s] || s == "__proto__" {
		s = "_" + s
	}
	return s
}

// Collision reports tools whose sanitized names clash.
type Collision struct {
	Name    string   // the sanitized name
	Sources []string // the source names that map to it, sorted
}

func (c Collision) String() string {
	return fmt.Sprintf("%s <- %s", c.Name, strings.Join(c.Sources, ", "))
}

// AssignNames sets each tool's Name from its SourceName with Identifier. Tools
// whose names collide are never merged: the first in source order keeps the
// plain name when it is its own source name (or else the first one does), the
// others get a numeric suffix (get_sum_2), and every collision is reported so
// callers can warn about it.
func AssignNames(tools []Tool) []Collision {
	groups := map[string][]int{}
	var order []string
	for i := range tools {
		id := Identifier(tools[i].SourceName)
		if _, ok := groups[id]; !ok {
			order = append(order, id)
		}
		groups[id] = append(groups[id], i)
	}
	var out []Collision
	for _, id := range order {
		idx := groups[id]
		// The tool whose source name already equals the identifier keeps it.
		keeper := idx[0]
		for _, i := range idx {
			if tools[i].SourceName == id {
				keeper = i
				break
			}
		}
		tools[keeper].Name = id
		if len(idx) == 1 {
			continue
		}
		c := Collision{Name: id}
		n := 2
		for _, i := range idx {
			c.Sources = append(c.Sources, tools[i].SourceName)
			if i == keeper {
				continue
			}
			for groups[fmt.Sprintf("%s_%d", id, n)] != nil {
				n++
			}
			tools[i].Name = fmt.Sprintf("%s_%d", id, n)
			groups[tools[i].Name] = []int{i} // taken
		}
		sort.Strings(c.Sources)
		out = append(out, c)
	}
	return out
}
