package visible

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, café, 日本", "plain text, café, 日本"},
		{"a\nb", "a\nb"},
		{"tab\there\r", `tab\there\r`},
		{"exe.\u202etxt", `exe.\u202Etxt`},
		{"zero\u200bwidth\ufeff", `zero\u200Bwidth\uFEFF`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"nbsp\u00a0and\u3000ideographic", `nbsp\u00A0and\u3000ideographic`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"bell\x07del\x7fc1\u0085", `bell\u0007del\u007Fc1\u0085`},
		{"tag \U000E0041", `tag \uDB40\uDC41`},
		// Invisible though not format characters (Unicode's default
		// ignorables): Hangul fillers, which make "admin" and "admin\u3164"
		// look alike, the grapheme joiner and variation selectors.
		{"admin\u3164 \u115f\u1160\uffa0", `admin\u3164 \u115F\u1160\uFFA0`},
		{"cg\u034fj vs\ufe0f\U000E0100", `cg\u034Fj vs\uFE0F\uDB40\uDD00`},
	}
	for _, tc := range tests {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSegments(t *testing.T) {
	got := Segments("a\u202eb\n")
	want := []Segment{{Text: "a"}, {Text: `\u202E`, Hidden: true, Rune: '\u202e'}, {Text: "b"}, {Text: `\n`, Hidden: true, Rune: '\n'}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Segments (-want +got):\n%s", diff)
	}
	if Segments("") != nil {
		t.Error("Segments of nothing is not empty")
	}
}

// Segments lose nothing: plain runs and the hidden characters make the
// text again, no plain run holds a hidden character, and each hidden one
// is written as its Code.
func FuzzSegments(f *testing.F) {
	f.Add("exe.\u202etxt\n\u200b")
	f.Add("\xff\xfe plain")
	f.Fuzz(func(t *testing.T, s string) {
		var again strings.Builder
		for _, seg := range Segments(s) {
			switch {
			case seg.Text == "":
				t.Fatalf("empty segment in %q", s)
			case seg.Hidden:
				if seg.Text != Code(seg.Rune) || !Hidden(seg.Rune) {
					t.Fatalf("hidden segment %+v", seg)
				}
				again.WriteRune(seg.Rune)
			default:
				for _, r := range seg.Text {
					if Hidden(r) {
						t.Fatalf("plain segment %q holds a hidden %U", seg.Text, r)
					}
				}
				again.WriteString(seg.Text)
			}
		}
		if again.String() != s {
			t.Fatalf("segments make %q of %q", again.String(), s)
		}
	})
}
