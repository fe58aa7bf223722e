package textdist

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"get_sum", "get_summ", 1},
		{"kitten", "sitting", 3}, {"héllo", "hello", 1}, {"flaw", "lawn", 2},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"echo", "get_sum", "get_tiny_image", "Get_Sums"}
	got := Nearest("get_summ", names, nil)
	want := []string{"Get_Sums", "get_sum", "echo", "get_tiny_image"} // ties by name
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Nearest (-want +got):\n%s", diff)
	}
	// A score function can favour substrings.
	got = Nearest("image", names, func(name, cand string, d int) int {
		if strings.Contains(cand, name) {
			return 0
		}
		return d
	})
	if got[0] != "get_tiny_image" {
		t.Errorf("scored Nearest: %v", got)
	}
}

// A name longer than maxCompared runes is compared by its beginning: the
// cost of a hostile name is bounded, and the names it begins like still
// come first.
func TestNearestLongName(t *testing.T) {
	names := []string{"echo", "get_sum", strings.Repeat("a", maxCompared) + "tail"}
	long := strings.Repeat("a", maxCompared) + strings.Repeat("z", 1<<20)
	var seen []string
	got := Nearest(long, names, func(name, cand string, d int) int {
		seen = append(seen, name)
		return d
	})
	if got[0] != names[2] {
		t.Errorf("Nearest of a long name: %v", got)
	}
	for _, n := range seen {
		if len([]rune(n)) != maxCompared {
			t.Fatalf("the score saw a name of %d runes, want %d", len([]rune(n)), maxCompared)
		}
	}
}

// DidYouMean finds what a mistyped configuration key or command meant,
// and nothing when no choice is near.
func TestDidYouMean(t *testing.T) {
	keys := []string{"command", "args", "env", "cwd", "url", "base_url", "max_executions", "paused_ttl"}
	commands := []string{"serve", "run", "types", "check", "approvals", "executions", "show", "delete"}
	tests := []struct {
		got     string
		choices []string
		want    string
	}{
		{"comand", keys, "command"},
		{"commmand", keys, "command"},
		{"arg", keys, "args"},
		{"baseUrl", keys, "base_url"},
		{"BASE-URL", keys, "base_url"},
		{"maxExecutions", keys, "max_executions"},
		{"paused_tl", keys, "paused_ttl"},
		{"xyz", keys, ""},
		{"colour", keys, ""},
		{"", keys, ""},
		{"serv", commands, "serve"},
		{"shwo", commands, "show"},
		{"zzzzzz", commands, ""},
	}
	for _, tt := range tests {
		want := ""
		if tt.want != "" {
			want = ` (did you mean "` + tt.want + `"?)`
		}
		if got := DidYouMean(tt.got, tt.choices); got != want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.got, got, want)
		}
	}
}
