package scrub

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzJSON checks that scrubbed JSON stays valid and holds no secret.
func FuzzJSON(f *testing.F) {
	f.Add(`{"a":"xsecretx"}`, "secret")
	f.Add(`["n\"q\\z"]`, `n"q\z`)
	f.Add(`"\u0041BCD"`, "ABCD")
	f.Add(`[-12345e6789]`, "2345")
	f.Fuzz(func(t *testing.T, doc, secret string) {
		if !json.Valid([]byte(doc)) || len(secret) < MinLen {
			return
		}
		out := New(secret).JSON(json.RawMessage(doc))
		if !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(Placeholder, secret) && holds(v, secret) {
			t.Fatalf("secret left in %q", out)
		}
	})
}

// holds reports whether a decoded value has secret in a string, a key or
// a number.
func holds(v any, secret string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, secret)
	case json.Number:
		return strings.Contains(string(x), secret)
	case []any:
		for _, e := range x {
			if holds(e, secret) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, secret) || holds(e, secret) {
				return true
			}
		}
	}
	return false
}
