package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A server's long text is cut for the log on a character boundary, so the
// log line stays valid UTF-8.
func TestCleanCutsOnACharacterBoundary(t *testing.T) {
	got := clean("a" + strings.Repeat("é", 150))
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 200+len("…") {
		t.Fatalf("clean: %q", got)
	}
}
