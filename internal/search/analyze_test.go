package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"getSum", []string{"get", "sum"}},
		{"get_sum", []string{"get", "sum"}},
		{"get-sum", []string{"get", "sum"}},
		{"issues/list-for-repo", []string{"issues", "list", "for", "repo"}},
		{"github.issues.create", []string{"github", "issues", "create"}},
		{"HTTPServer2Go", []string{"http", "server2", "go"}},
		{"createNote v2", []string{"create", "note", "v2"}},
		{"list PRs and URLs", []string{"list", "prs", "and", "urls"}},
		{"Crème brûlée", []string{"crème", "brûlée"}},
		// One form whatever the text's: NFC, and full case folding.
		{"Cafe\u0301 CAFÉ", []string{"caf\u00e9", "caf\u00e9"}},
		{"Straße STRASSE STRA\u1e9eE", []string{"strasse", "strasse", "strasse"}},
		{"ΣΟΦΟΣ σοφο\u03c2", []string{"σοφοσ", "σοφοσ"}},
		{"\ufb01le", []string{"file"}},
		{"", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, Words(tc.in)); diff != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestStem(t *testing.T) {
	same := [][]string{
		{"repository", "repositories"},
		{"branch", "branches"},
		{"merge", "merged", "merging", "merges"},
		{"create", "created", "creates", "creating"},
		{"star", "starred", "stars", "starring"},
		{"review", "reviews", "reviewed"},
		{"reviewer", "reviewers"},
		{"follow", "follows", "followed", "following"},
		{"status", "statuses"},
		{"release", "releases"},
		{"access", "accesses"},
		{"install", "installed"},
	}
	for _, group := range same {
		want := Stem(group[0])
		for _, w := range group[1:] {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%q) = %q, want %q (as Stem(%q))", w, got, want, group[0])
			}
		}
	}
	// Short words, words of digits and non-ASCII words are kept.
	for _, w := range []string{"get", "use", "2024", "v2", "für"} {
		if got := Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want it kept", w, got)
		}
	}
	// Never shorter than three letters.
	for _, w := range []string{"used", "ping", "feed", "user"} {
		if got := Stem(w); len(got) < 3 {
			t.Errorf("Stem(%q) = %q, shorter than three letters", w, got)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Merge a pull request", []string{"merg", "pull", "request"}},
		{"star a repo", []string{"star", "repository"}},
		{"list PRs", []string{"list", "pull", "request"}},
		{"the sum of two numbers", []string{"sum", "two", "number"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, appendTerms(nil, tc.in, nil)); diff != "" {
			t.Errorf("appendTerms(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestRoot(t *testing.T) {
	for w, want := range map[string]string{
		"deployment":    "deploy",
		"configuration": "configur",
		"vulnerable":    "vulner",
		"owner":         "own",
		"reviewer":      "review",
		"user":          "user", // the root would be two letters
		"general":       "gener",
		"action":        "action", // three letters: only -er and -or go that far
		"deploy":        "deploy",
	} {
		if got := root(Stem(w)); got != want {
			t.Errorf("root(Stem(%q)) = %q, want %q", w, got, want)
		}
	}
}

// A combining mark is part of its word: a decomposed accent ("e" and
// U+0301, composed into é) and the vowel signs of Devanagari do not split
// words.
func TestWordsKeepCombiningMarks(t *testing.T) {
	for in, want := range map[string][]string{
		"cafe\u0301 menu":     {"caf\u00e9", "menu"},
		"re\u0301sume\u0301s": {"r\u00e9sum\u00e9s"},
		"नमस्ते दुनिया":       {"नमस्ते", "दुनिया"},
		"getCafe\u0301Menu":   {"get", "caf\u00e9", "menu"},
	} {
		if diff := cmp.Diff(want, Words(in)); diff != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", in, diff)
		}
	}
}
