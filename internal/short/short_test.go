package short

import (
	"strings"
	"testing"
)

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"one":                    "one",
		"  one  \n two":          "one",
		"\n\n  SELECT 1\nFROM x": "SELECT 1",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer text", 8, "a longer…"},
		{"héllo", 2, "h…"}, // never inside é's two bytes
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0:             "0 bytes",
		512:           "512 bytes",
		1023:          "1023 bytes",
		1024:          "1 KiB",
		3277:          "3.2 KiB",
		256 << 20:     "256 MiB",
		1 << 30:       "1 GiB",
		3 << 29:       "1.5 GiB",
		(1 << 40) * 2: "2 TiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOrList(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := OrList(tc.words); got != tc.want {
			t.Errorf("OrList(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"7":                     `"7"`,
		"a\nb":                  `"a\nb"`,
		strings.Repeat("x", 41): `"` + strings.Repeat("x", 40) + `…"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
