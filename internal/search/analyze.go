package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Words splits text into lower-case words at anything that is not a
// letter or a digit (spaces, punctuation, snake_case, kebab-case, dots,
// slashes) and at camelCase boundaries: "getSum", "get_sum", "get-sum" and
// "issues/get" give get, sum and issues, get. "HTTPServer" gives http,
// server. A combining mark stays with its letter (an accent written as
// "e" and U+0301, a Devanagari vowel sign).
//
// Each word comes out in one form whatever the text's, so that a query
// and a document meet: case-folded in full (Unicode's case folding: ß and
// ẞ are ss, a final sigma is σ, a ligature its letters) and composed
// (NFC: "e" and U+0301 is é). Documents and queries are both split here,
// and nothing else normalises.
func Words(s string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, fold(s[start:end]))
			start = -1
		}
	}
	var prev rune
	for i, c := range s {
		if start >= 0 && unicode.IsMark(c) {
			continue // a combining mark belongs to its letter (and is not prev)
		}
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			flush(i)
			prev = c
			continue
		}
		if start >= 0 && unicode.IsUpper(c) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && startsWord(s, i)) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
		prev = c
	}
	flush(len(s))
	return out
}

// fold is a word's one form: lower case for ASCII (the common word, at
// the cost of strings.ToLower), full case folding then NFC otherwise.
func fold(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			// A Caser keeps state: one a word, not one shared.
			return norm.NFC.String(cases.Fold().String(w))
		}
	}
	return strings.ToLower(w)
}

// startsWord reports whether the capital at byte i, after another, begins
// a word: a lower-case letter follows it ("HTTPServer"), but not a plural
// s that ends the run ("PRs", "URLs").
func startsWord(s string, i int) bool {
	rest := []rune(s[i:min(len(s), i+12)])
	if len(rest) < 2 || !unicode.IsLower(rest[1]) {
		return false
	}
	return rest[1] != 's' || len(rest) > 2 && unicode.IsLower(rest[2])
}

// appendTerms analyses s for the index and appends its terms to out: its
// words without stop words, abbreviations spelt out (repo → repository)
// and every word stemmed. When surface is not nil, it records for each
// term the shortest word (then the first in order) that gave it, which is
// the word to look up where a stem is not a word.
func appendTerms(out []string, s string, surface map[string]string) []string {
	for _, w := range Words(s) {
		if stopWords[w] {
			continue
		}
		if full, ok := abbreviations[w]; ok {
			out = append(out, full...)
			continue
		}
		t := Stem(w)
		out = append(out, t)
		if surface != nil {
			if cur, ok := surface[t]; !ok || len(w) < len(cur) || len(w) == len(cur) && w < cur {
				surface[t] = w
			}
		}
	}
	return out
}

// stopWords are left out of documents and queries: they say nothing about
// which method is meant.
var stopWords = setOf(`a an the of to in into on onto for from by with at as
	is are be been was were it its this that these those and or nor but
	do does can could should would will shall may might must
	how what which who whom whose where when why
	some any each every all via using use per than then there their
	please want need let lets not no
	information details detail data specific particular given certain`)

// abbreviations are spelt out on both sides, in documents and queries, so
// "repo" finds "repository" and "PR" finds "pull request". The values are
// stems.
var abbreviations = map[string][]string{}

func init() {
	for short, long := range map[string]string{
		"repo": "repository", "repos": "repository",
		"pr": "pull request", "prs": "pull request",
		"mr": "pull request", "mrs": "pull request",
		"org": "organization", "orgs": "organization",
		"msg": "message", "msgs": "message",
		"config": "configuration", "cfg": "configuration",
		"auth": "authentication", "env": "environment", "envs": "environment",
		"dir": "directory", "dirs": "directory", "db": "database",
		"doc": "document", "docs": "document", "img": "image", "pic": "image",
		"num": "number", "nums": "number", "desc": "description",
		"attr": "attribute", "attrs": "attribute", "param": "parameter", "params": "parameter",
		"pkg": "package", "pkgs": "package", "txt": "text",
	} {
		abbreviations[short] = appendTerms(nil, long, nil) // none is a stop word or abbreviation
	}
}

// setOf is the set of the words of a space-separated list.
func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// stemSet is the set of the stems of the words of a list.
func stemSet(words string) map[string]bool {
	m := map[string]bool{}
	for w := range setOf(words) {
		m[Stem(w)] = true
	}
	return m
}

// Stem reduces an English word to a stem shared by its inflections, so
// that a query and a document meet whatever form either uses: plurals
// (repositories → repository, branches → branch), -ed and -ing forms
// (merged, merging → merg; starred → star) and a final e (create →
// creat). Agent nouns keep their -er: a reviewer is not a review. It is deliberately light: it
// never removes more than one suffix of each kind, and never leaves a
// stem shorter than three letters. Words of digits are kept.
func Stem(w string) string {
	if len(w) <= 3 || !isASCIILower(w) {
		return w
	}
	// Plurals.
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	// Verb forms.
	for _, suf := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 && hasVowel(w[:len(w)-len(suf)]) {
			w = undouble(w[:len(w)-len(suf)])
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// root strips one derivational suffix from a stem, so that the words of
// one family meet where their stems do not: deployment and deploy,
// vulnerable and vulnerability, configuration and configure, owner and
// own. A query word also finds the indexed terms of its root, at
// rootWeight: a family's words are related, not the same (a reviewer is
// not a review). The root keeps at least four letters, three for an agent
// noun's -er or -or; a stem without one of the suffixes is its own root.
func root(stem string) string {
	for _, suf := range derivational {
		least := 4
		if suf == "er" || suf == "or" {
			least = 3
		}
		if strings.HasSuffix(stem, suf) && len(stem)-len(suf) >= least {
			return stem[:len(stem)-len(suf)]
		}
	}
	return stem
}

// derivational are the suffixes root strips, the first that ends a stem;
// abl is able after Stem took its final e (vulnerable → vulnerabl).
var derivational = []string{"ation", "ment", "ity", "able", "ible", "ion", "al", "ive", "ly", "ness", "or", "er", "abl"}

// undouble removes a doubled final consonant left by a suffix (starr →
// star, runn → run), but not ll, ss or zz (install, access, buzz).
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
