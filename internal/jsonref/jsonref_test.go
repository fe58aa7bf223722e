package jsonref

import (
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"b":1,"a":{"d":[1,2],"c":null}}`, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{" {\n \"a\" : 1.50 } ", `{"a":1.50}`},
		{`{"big":12345678901234567890}`, `{"big":12345678901234567890}`},
		{`"x"`, `"x"`},
	}
	for _, tc := range tests {
		got, _, err := Canonical([]byte(tc.in))
		if err != nil {
			t.Errorf("Canonical(%q): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Canonical(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `nope`} {
		if _, _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) accepted invalid JSON", bad)
		}
	}
}

// Pointer resolves through objects and arrays; Follow follows a chain of
// references, through the shared schemas WithShared added, and gives up on
// a reference that is not local, does not resolve, or loops.
func TestPointerAndFollow(t *testing.T) {
	root, err := Decode([]byte(`{"$defs":{"a/b":{"$ref":"#/$defs/c"},"c":{"type":"string"},"loop":{"$ref":"#/$defs/loop"}},"allOf":[{"x":1}],"ext":{"$ref":"https://x/y"},"sh":{"$ref":"#/components/s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	shared := map[string]any{"components": map[string]any{"s": map[string]any{"type": "integer"}}}
	root = WithShared(root, shared)
	if v, ok := Pointer(root, "/allOf/0/x"); !ok || v.(interface{ String() string }).String() != "1" {
		t.Errorf("Pointer through an array = %v, %v", v, ok)
	}
	for _, bad := range []string{"/allOf/01", "/allOf/1", "/nope", "nope"} {
		if _, ok := Pointer(root, bad); ok {
			t.Errorf("Pointer(%q) resolved", bad)
		}
	}
	for ref, want := range map[string]string{"#/$defs/a~1b": "string", "#/$defs/a%7E1b": "string", "#/components/s": "integer", "#/$defs/loop": "", "#/ext": "", "#/nope": ""} {
		m := Follow(map[string]any{"$ref": ref}, root)
		if got, _ := m["type"].(string); got != want || (want == "") != (m == nil) {
			t.Errorf("Follow(%s) = %v, want type %q", ref, m, want)
		}
	}
}

// An array index is digits without a leading zero (RFC 6901): "+1", "-0",
// " 1" and indexes past any array are not indexes, whatever strconv makes
// of them.
func TestPointerArrayIndexes(t *testing.T) {
	root, err := Decode([]byte(`{"a":["zero","one"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"0": "zero", "1": "one"} {
		if v, ok := Pointer(root, "/a/"+tok); !ok || v != want {
			t.Errorf("Pointer(/a/%s) = %v, %v; want %q", tok, v, ok, want)
		}
	}
	for _, bad := range []string{"+1", "-0", "+0", "-1", "00", "01", "1 ", "%201", "2", "99999999999999999999999", "0x1", "1e0", "", "-"} {
		if v, ok := Pointer(root, "/a/"+bad); ok {
			t.Errorf("Pointer(/a/%s) resolved to %v", bad, v)
		}
	}
}

// A shared schema that a reference names is added whole, even when a
// reference into it was added first: a recursive type whose property
// refers to it ("#/$defs/Node/properties/child" first, which refers to
// "#/$defs/Node") must not resolve to the stub made on the way.
func TestWithSharedAddsWholeTargets(t *testing.T) {
	shared, err := Decode([]byte(`{"$defs":{"Node":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"child":{"$ref":"#/$defs/Node"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Decode([]byte(`{"$ref":"#/$defs/Node/properties/child"}`))
	if err != nil {
		t.Fatal(err)
	}
	root := WithShared(doc, shared)
	node := Follow(map[string]any{"$ref": "#/$defs/Node"}, root)
	if _, ok := node["required"]; !ok || node["type"] != "object" {
		t.Errorf("#/$defs/Node resolves to %v in the document; want the shared schema", node)
	}
	if got := Follow(root, root); got == nil || got["type"] != "object" {
		t.Errorf("the document's reference resolves to %v; want the Node object", got)
	}
	// The shared value is not changed.
	if n, _ := Pointer(shared, "/$defs/Node"); len(n.(map[string]any)) != 3 {
		t.Errorf("shared Node changed: %v", n)
	}
}

// A reference through an array of a shared schema ("#/$defs/A/oneOf/1")
// adds the array whole: the objects made on the way are objects in the
// shared schemas too (an object for oneOf is no schema, and the method's
// schema would not compile).
func TestWithSharedThroughAnArray(t *testing.T) {
	shared, err := Decode([]byte(`{"$defs":{"A":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Decode([]byte(`{"properties":{"x":{"$ref":"#/$defs/A/oneOf/1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	root := WithShared(doc, shared)
	if v, _ := Pointer(root, "/$defs/A/oneOf"); len(asArray(v)) != 2 {
		t.Errorf("/$defs/A/oneOf is %#v; want the shared array", v)
	}
	if got := Follow(map[string]any{"$ref": "#/$defs/A/oneOf/1"}, root); got["type"] != "integer" {
		t.Errorf("the reference resolves to %v", got)
	}
}

func asArray(v any) []any { a, _ := v.([]any); return a }

func TestJoinIsSplitsInverse(t *testing.T) {
	for _, toks := range [][]string{nil, {""}, {"$defs", "a/b", "c~d", "0"}} {
		ptr := Join(toks)
		got, ok := Split(ptr)
		if !ok || len(got) != len(toks) || strings.Join(got, "\x00") != strings.Join(toks, "\x00") {
			t.Errorf("Split(Join(%q)) = %q (pointer %q), %v", toks, got, ptr, ok)
		}
	}
	if got := Join([]string{"$defs", "a/b", "c~d"}); got != "/$defs/a~1b/c~0d" {
		t.Errorf("Join = %q", got)
	}
}
