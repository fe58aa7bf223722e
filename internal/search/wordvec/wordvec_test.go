package wordvec_test

import (
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/search/wordvec"
)

// The embedded table loads whole, and its vectors carry meaning: words
// used for one another are nearer than unrelated words.
func TestVectors(t *testing.T) {
	if n := wordvec.Len(); n != 50000 {
		t.Fatalf("%d words, want the 50,000 gen writes", n)
	}
	for _, w := range []string{"the", "repository", "delete", "newest", "latest"} {
		if !wordvec.Lookup(w).Ok() {
			t.Errorf("%q has no vector", w)
		}
	}
	for _, w := range []string{"", "Repository", "zzzqqq", "repo_name"} {
		if wordvec.Lookup(w).Ok() {
			t.Errorf("%q has a vector", w)
		}
	}
	cos := func(a, b string) float32 { return wordvec.Cos(wordvec.Lookup(a), wordvec.Lookup(b)) }
	if c := cos("delete", "delete"); c < 0.999 || c > 1.001 {
		t.Errorf("cos(delete, delete) = %v, want 1", c)
	}
	if cos("newest", "latest") != cos("latest", "newest") {
		t.Error("cos is not symmetric")
	}
	for _, p := range [][3]string{
		{"newest", "latest", "banana"},
		{"reply", "answer", "tree"},
		{"wipe", "erase", "music"},
		{"deploy", "deployment", "cooking"},
	} {
		if near, far := cos(p[0], p[1]), cos(p[0], p[2]); near <= far+0.2 {
			t.Errorf("cos(%s, %s) = %.2f is not well above cos(%s, %s) = %.2f", p[0], p[1], near, p[0], p[2], far)
		}
	}
	if c := wordvec.Cos(wordvec.Lookup("zzzqqq"), wordvec.Lookup("delete")); c != 0 {
		t.Errorf("cos with no vector = %v, want 0", c)
	}
}

func TestWordByRank(t *testing.T) {
	if w := wordvec.Word(0); w != "the" {
		t.Errorf("Word(0) = %q, want the", w)
	}
	if w := wordvec.Word(1234); wordvec.Rank(w) != 1234 {
		t.Errorf("Word(1234) = %q of rank %d", w, wordvec.Rank(w))
	}
	if wordvec.Word(-1) != "" || wordvec.Word(wordvec.Len()) != "" {
		t.Error("a rank out of range has a word")
	}
}
