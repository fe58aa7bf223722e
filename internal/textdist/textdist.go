// Package textdist measures how far apart names are, for "did you mean"
// suggestions in config errors, the command line, unknown sandbox methods
// and catalog look-ups.
package textdist

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Distance is the Levenshtein edit distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// maxCompared is how many runes of a name Nearest compares: a name can
// come from a program or a client (hostile), and the distance costs its
// length times each candidate's.
const maxCompared = 128

// Nearest returns names ordered by case-insensitive edit distance to name
// (its first maxCompared runes), ties by name. score, when not nil,
// adjusts a candidate's distance (e.g. to favour substrings).
func Nearest(name string, names []string, score func(name, candidate string, d int) int) []string {
	runes := 0
	for i := range name { // clipped without reading further: no copy of all of it
		if runes == maxCompared {
			name = name[:i]
			break
		}
		runes++
	}
	low := strings.ToLower(name)
	dist := make(map[string]int, len(names))
	for _, n := range names {
		d := Distance(low, strings.ToLower(n))
		if score != nil {
			d = score(name, n, d)
		}
		dist[n] = d
	}
	out := make([]string, len(names)) // a new slice, never nil
	copy(out, names)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(dist[a], dist[b]), strings.Compare(a, b)) })
	return out
}

// DidYouMean is ` (did you mean "x"?)` for the choice a mistyped word most
// likely meant, else "": the choice equal to it but for case, '_' and '-'
// ("baseUrl" for "base_url"), else the nearest when it is at most
// max(2, a third of its length) edits away or begins with the word.
func DidYouMean(word string, choices []string) string {
	norm := strings.NewReplacer("_", "", "-", "")
	for _, c := range choices {
		if norm.Replace(strings.ToLower(c)) == norm.Replace(strings.ToLower(word)) {
			return fmt.Sprintf(" (did you mean %q?)", c)
		}
	}
	near := Nearest(word, choices, nil)
	if word == "" || len(near) == 0 {
		return ""
	}
	best := near[0]
	if Distance(strings.ToLower(word), strings.ToLower(best)) > max(2, len(best)/3) && !strings.HasPrefix(best, word) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
