package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString: AppendString writes what encoding/json.Marshal writes,
// AppendStringNoHTML what an Encoder without HTML escaping writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q " b \ s`, "\b\f\n\r\t\x00\x1f\x7f", "<a>&amp;", "日本 ü", "\u2028\u2029", "bad \xff utf8 \xe6\x97", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		n, chars := 2, []byte{'"'}
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			n += CharLen(r, size)
			chars = AppendChar(chars, r, size)
			i += size
		}
		if chars = append(chars, '"'); string(chars) != string(want) {
			t.Fatalf("AppendChar over %q = %s, want %s", s, chars, want)
		}
		if want := utf8.RuneCount(want); n != want {
			t.Fatalf("CharLen over %q sums to %d, want %d characters", s, n, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := AppendStringNoHTML(nil, s), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); string(got) != string(want) {
			t.Fatalf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	})
}

// Marshal writes <, > and & as they are, compact, without a newline.
func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"a": "<b> & c", "n": []int{1}})
	if want := `{"a":"<b> & c","n":[1]}`; err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v; want %s", got, err, want)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("Marshal of a func: no error")
	}
}
