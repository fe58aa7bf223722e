package jsontext

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString: AppendString writes what encoding/json.Marshal writes.
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
	})
}
