package sandbox

import (
	"fmt"
	"sort"
	"strings"
)

// nearest returns names ordered by edit distance to name (case-insensitive),
// ties by name.
func nearest(name string, names []string) []string {
	type scored struct {
		name string
		d    int
	}
	low := strings.ToLower(name)
	s := make([]scored, 0, len(names))
	for _, n := range names {
		s = append(s, scored{n, editDistance(low, strings.ToLower(n))})
	}
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].d != s[j].d {
			return s[i].d < s[j].d
		}
		return s[i].name < s[j].name
	})
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.name
	}
	return out
}

// isClose reports whether candidate is a plausible typo of name.
func isClose(name, candidate string) bool {
	d := editDistance(strings.ToLower(name), strings.ToLower(candidate))
	return d <= max(2, len(name)/3)
}

// suggestion builds the hint that follows an unknown name: "did you mean
// x?" when some names are close, else the available names, nearest first.
func suggestion(name string, names []string, what string) string {
	if len(names) == 0 {
		return fmt.Sprintf("there are no %s", what)
	}
	ordered := nearest(name, names)
	var closeOnes []string
	for _, n := range ordered {
		if len(closeOnes) < 3 && isClose(name, n) {
			closeOnes = append(closeOnes, n)
		}
	}
	if len(closeOnes) > 0 {
		return "did you mean " + strings.Join(closeOnes, " or ") + "?"
	}
	const show = 10
	if len(ordered) > show {
		return fmt.Sprintf("available %s: %s, … (%d in all)", what, strings.Join(ordered[:show], ", "), len(ordered))
	}
	return fmt.Sprintf("available %s: %s", what, strings.Join(ordered, ", "))
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
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
