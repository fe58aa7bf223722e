package jsontext

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// anyValues builds what encoding/json's Unmarshal into an any builds
// (objects lose their order, the last duplicate key wins).
type anyValues struct{}

func (anyValues) Null() any           { return nil }
func (anyValues) Bool(b bool) any     { return b }
func (anyValues) String(s string) any { return s }
func (anyValues) Number(text []byte) (any, bool) {
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}
func (anyValues) Array(items []any) any {
	if items == nil {
		return []any{}
	}
	return items
}
func (anyValues) Object(keys []string, values []any) (any, bool) {
	m := make(map[string]any, len(keys))
	for i, k := range keys {
		m[k] = values[i]
	}
	return m, true
}

// order records members in document order, to check it is kept.
type order struct{ anyValues }

func (order) Object(keys []string, _ []any) (any, bool) { return strings.Join(keys, ","), true }

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want any
		ok   bool
	}{
		{` {"a": [1, "x", null, true, false, -0.5e-3]} `, map[string]any{"a": []any{1.0, "x", nil, true, false, -0.5e-3}}, true},
		{`[]`, []any{}, true},
		{`{}`, map[string]any{}, true},
		{`{"a":1,"a":2}`, map[string]any{"a": 2.0}, true},
		{`"\ud83d\ude00"`, "😀", true},
		{`1e999`, nil, false},   // the builder rejects it: out of range
		{`[1,]`, nil, false},    // trailing comma
		{`{"a" 1}`, nil, false}, // no colon
		{`01`, nil, false},
		{`1.`, nil, false},
		{`"a` + "\x01" + `"`, nil, false}, // control character
		{`"\x"`, nil, false},
		{`nul`, nil, false},
		{`[1] x`, nil, false},
		{``, nil, false},
	} {
		got, ok := Parse[any]([]byte(tt.raw), 100, anyValues{})
		if ok != tt.ok || (ok && !cmp.Equal(got, tt.want)) {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := Parse[any]([]byte(`{"b":1,"a":2,"b":3}`), 10, order{}); !ok || got != "b,a,b" {
		t.Errorf("members reached the builder as %v, %v; want b,a,b in document order", got, ok)
	}
	deep := strings.Repeat("[", 11) + strings.Repeat("]", 11)
	if _, ok := Parse[any]([]byte(deep[1:len(deep)-1]), 10, anyValues{}); !ok {
		t.Error("nesting 10 with maxDepth 10 rejected")
	}
	if _, ok := Parse[any]([]byte(deep), 10, anyValues{}); ok {
		t.Error("nesting 11 with maxDepth 10 accepted")
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`plain`, `\n\t\"\\\/\b\f\r`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\ud83d\ud83d\ude00`, `\ud83d\u0041`,
		"\xff", "a\xc3", "\xed\xa0\x80", "é", `\u0000`, `\uFFFF`, `\uD7FF\uE000`,
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatalf("encoding/json rejects %q: %v", s, err)
		}
		got, ok := unquote([]byte(s))
		if !ok || got != want {
			t.Errorf("unquote(%q) = %q, %v; encoding/json: %q", s, got, ok, want)
		}
	}
}

// exact builds what anyValues builds and panics when a container's
// slices were not made at its size: sizes counted it wrong.
type exact struct{ anyValues }

func mustBeExact(what string, n, size int) {
	if n != size {
		panic(fmt.Sprintf("%s of %d made for %d", what, n, size))
	}
}

func (e exact) Array(items []any) any {
	mustBeExact("an array", len(items), cap(items))
	return e.anyValues.Array(items)
}

func (e exact) Object(keys []string, values []any) (any, bool) {
	mustBeExact("an object's keys", len(keys), cap(keys))
	mustBeExact("an object's values", len(values), cap(values))
	return e.anyValues.Object(keys, values)
}

// TestSizesAreExact: the counting pass reads strings, escapes, numbers
// and white space as the parser does, so every container's slices are
// made at its size; of a text cut short or malformed, which the parser
// rejects, the containers it finished before are exact too.
func TestSizesAreExact(t *testing.T) {
	for _, raw := range []string{
		`[]`, `[ ]`, `[[]]`, `[[],[]]`, `{}`, `{ }`, `{"a":{}}`, `[0]`, `[-1.5e+3, 2E-2, 0]`,
		`["\"", "\\", "\\\"", "]", "[", ",", "\u005d", "\/"]`,
		`{"a,b":[1,2], "c\"":{"d":[]}, "]":"}"}`,
		` [ 1 , [ 2 , 3 ] , { "x" : [ ] } ] `,
		"[\"\xff\", \"\u00e9\", true, false, null]",
	} {
		if _, ok := Parse[any]([]byte(raw), 100, exact{}); !ok {
			t.Errorf("Parse(%s) rejected", raw)
		}
	}
	// Texts cut short and malformed are rejected, whatever was counted.
	for _, raw := range []string{`[1,2`, `[1,2,`, `{"a":1,"b"`, `["a\"]`, `[1 2]`, `[1,]`, `[[1],[2]`} {
		if _, ok := Parse[any]([]byte(raw), 100, exact{}); ok {
			t.Errorf("Parse(%s) accepted", raw)
		}
	}
}

// FuzzParse checks Parse against encoding/json: the same texts accepted
// (within the nesting limit), the same values built, every container's
// slices made at its size.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud83d\ude00"`, "\"\xff\"", `-0.5e-3`, `[{},[]]`, `{"a":1,"a":2}`, `1e400`, `"\uAbCd"`, `"\u12g4"`, `"\u12"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := Parse[any]([]byte(raw), 10000, exact{})
		var want any
		err := json.Unmarshal([]byte(raw), &want)
		switch {
		case ok != (err == nil):
			t.Errorf("Parse(%q) ok = %v; encoding/json: %v", raw, ok, err)
		case ok && !cmp.Equal(got, want):
			t.Errorf("Parse(%q) = %v; encoding/json: %v", raw, got, want)
		}
	})
}

// wide is a value of 64 bytes, as a parsed value's node is; wides builds
// nothing, so that what a parse allocates is the parser's own.
type wide struct{ _ [8]int64 }

type wides struct{}

func (wides) Null() wide                           { return wide{} }
func (wides) Bool(bool) wide                       { return wide{} }
func (wides) String(string) wide                   { return wide{} }
func (wides) Number([]byte) (wide, bool)           { return wide{}, true }
func (wides) Array([]wide) wide                    { return wide{} }
func (wides) Object([]string, []wide) (wide, bool) { return wide{}, true }

// TestParseAllocatesItemsOnce: the items of a large array, and the keys
// and values of a large object, are allocated once, at their size: not
// gathered on a growing stack and copied out, which took several times
// what the values take (for a document of "[0,0,…]", 141 times its size
// at the peak, against 40 for the values).
func TestParseAllocatesItemsOnce(t *testing.T) {
	const n = 1 << 18
	for name, raw := range map[string]string{
		"array":  "[0" + strings.Repeat(",0", n-1) + "]",
		"object": `{"a":0` + strings.Repeat(`,"a":0`, n-1) + "}",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, ok := Parse[wide]([]byte(raw), 10, wides{}); !ok {
			t.Fatalf("%s: not parsed", name)
		}
		runtime.ReadMemStats(&after)
		// The items (64 bytes each) and, for the object, the keys (16).
		need := uint64(n * 64)
		if name == "object" {
			need += n * 16
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > need+need/4 {
			t.Errorf("%s of %d items: the parse allocated %d MiB, %.1f times the %d MiB of its items", name, n, got>>20, float64(got)/float64(need), need>>20)
		}
	}
}
