package pass

import (
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
)

// isClose reports whether candidate is a plausible typo of name.
func isClose(name, candidate string) bool {
	d := textdist.Distance(strings.ToLower(name), strings.ToLower(candidate))
	return d <= max(2, len(name)/3)
}

// suggestion builds the hint that follows an unknown name: "did you mean
// x?" when some names are close, else the available names, nearest first.
func suggestion(name string, names []string, what string) string {
	if len(names) == 0 {
		return fmt.Sprintf("there are no %s", what)
	}
	ordered := textdist.Nearest(name, names, nil) // by edit distance, ties by name
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
