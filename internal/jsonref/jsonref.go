// Package jsonref decodes JSON schemas and follows their local references
// ("#/…", a JSON pointer into the document): the one resolver that the
// catalog's validation and check before running and typegen's declarations
// share. Only local references are followed; $id and $anchor are not
// considered, and nothing is fetched.
package jsonref

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Decode decodes one JSON value with numbers kept as json.Number (their
// literal text), as the schema validator decodes them; trailing data is an
// error.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// Tokens splits a URI fragment holding a JSON pointer (a $ref's, percent
// escapes decoded first) into its decoded tokens; "" is the whole document
// (no tokens).
func Tokens(frag string) ([]string, bool) {
	if p, err := url.PathUnescape(frag); err == nil {
		frag = p
	}
	return Split(frag)
}

// Split splits a JSON pointer as written (RFC 6901, as a validator's
// instance location: no percent escapes) into its decoded tokens; "" is
// the whole document (no tokens).
func Split(ptr string) ([]string, bool) {
	if ptr == "" {
		return nil, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = Unescape(t)
	}
	return toks, true
}

// Join writes decoded tokens as a JSON pointer (RFC 6901, as Split reads
// it): each escaped and preceded by "/"; no tokens is "" (the whole
// document).
func Join(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// Unescape decodes a JSON pointer token ("a~1b" is "a/b"); a token
// without '~', the usual one, is returned as it is, without allocating.
func Unescape(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return unescaper.Replace(tok)
}

// Escape encodes a JSON pointer token ("a/b" is "a~1b").
func Escape(tok string) string { return escaper.Replace(tok) }

var (
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
)

// Pointer resolves a URI fragment holding a JSON pointer ("" is the whole
// document) through objects and arrays.
func Pointer(root any, frag string) (any, bool) {
	toks, ok := Tokens(frag)
	if !ok {
		return nil, false
	}
	cur := root
	for _, tok := range toks {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if !IsIndex(tok) || err != nil || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// IsIndex reports whether a pointer token is an array index (RFC 6901):
// digits without a leading zero ("0", "17"; not "01", "+1" or "-0", which
// strconv would take).
func IsIndex(tok string) bool {
	return tok != "" && strings.Trim(tok, "0123456789") == "" && (tok[0] != '0' || len(tok) == 1)
}

// maxFollow bounds a chain of references Follow walks.
const maxFollow = 32

// Follow follows sch's local $ref, and the target's, until a schema
// without one, resolving each in root (a method's input schema has the
// shared schemas it refers to added by WithShared); nil when a reference is
// not local or does not resolve, for a schema that is not an object, and
// past maxFollow references.
func Follow(sch, root any) map[string]any {
	for range maxFollow {
		m, ok := sch.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if !strings.HasPrefix(ref, "#") {
			return nil
		}
		if sch, ok = Pointer(root, ref[1:]); !ok {
			return nil
		}
	}
	return nil
}

// maxWalk bounds how deep Refs looks for references.
const maxWalk = 200

// Refs calls f with every local $ref ("#…") within v, and reports whether
// it saw all of v (nothing deeper than maxWalk).
func Refs(v any, f func(ref string)) bool { return refs(v, 0, f) }

func refs(v any, depth int, f func(string)) bool {
	if depth > maxWalk {
		return false
	}
	all := true
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, "#") {
			f(r)
		}
		for _, e := range x {
			all = refs(e, depth+1, f) && all
		}
	case []any:
		for _, e := range x {
			all = refs(e, depth+1, f) && all
		}
	}
	return all
}

// set sets the value at the pointer toks in root, making the objects
// missing on the way; false when a non-object is in the way.
func set(root map[string]any, toks []string, v any) bool {
	if len(toks) == 0 {
		return false
	}
	cur := root
	for _, t := range toks[:len(toks)-1] {
		switch x := cur[t].(type) {
		case map[string]any:
			cur = x
		case nil:
			m := map[string]any{}
			cur[t] = m
			cur = m
		default:
			return false
		}
	}
	cur[toks[len(toks)-1]] = v
	return true
}

// WithShared adds to schema doc (freshly decoded: it is changed) the parts
// of shared that its local references (and theirs, transitively) name and
// that doc lacks, at the same places, and returns doc. shared's values are
// added, not copied, and never changed: a reference that passes through one
// of them resolves in doc exactly when it does in shared.
//
// What doc lacks is decided on doc as decoded, a part through an array
// is added from the array on, and the parts are added outermost first, a
// part within one already added being there with it:
// adding "#/$defs/A/properties/x" makes objects on its way, and a later
// reference to "#/$defs/A" must find shared's A, not those.
func WithShared(doc, shared any) any {
	m, ok := doc.(map[string]any)
	if !ok || shared == nil {
		return doc
	}
	type part struct {
		toks  []string
		value any
	}
	var parts []part
	queue := []any{m}
	seen := map[string]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		Refs(v, func(ref string) {
			if seen[ref] {
				return
			}
			seen[ref] = true
			if _, ok := Pointer(m, ref[1:]); ok {
				return
			}
			target, ok := Pointer(shared, ref[1:])
			if !ok {
				return
			}
			queue = append(queue, target)
			// The part added ends at the first array on the way: the
			// objects made on the way to it must be objects in shared.
			toks, _ := Tokens(ref[1:])
			cur := shared
			for i, t := range toks {
				if a, ok := cur.([]any); ok {
					toks, target = toks[:i], a
					break
				}
				obj, _ := cur.(map[string]any) // (Pointer went this way)
				cur = obj[t]
			}
			parts = append(parts, part{toks, target})
		})
	}
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(len(a.toks), len(b.toks)) })
	added := map[string]bool{} // pointers of the parts added, escaped
next:
	for _, p := range parts {
		ptr := ""
		for _, t := range p.toks {
			ptr += "/" + Escape(t)
			if added[ptr] {
				continue next
			}
		}
		if set(m, p.toks, p.value) {
			added[ptr] = true
		}
	}
	return m
}

// Canonical re-encodes a JSON value so that key order and whitespace do
// not matter: objects come out with sorted keys, numbers keep their literal
// text. Empty input is the empty object (a call without arguments). It
// returns the decoded value (as Decode gives it) too, so a caller that
// needs both decodes once.
func Canonical(raw []byte) (json.RawMessage, any, error) {
	// No arguments (the sandbox sends {} then) is common: no decoder for it.
	if string(raw) == "{}" || len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), map[string]any{}, nil
	}
	v, err := Decode(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("decode JSON: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode JSON: %w", err)
	}
	return out, v, nil
}
