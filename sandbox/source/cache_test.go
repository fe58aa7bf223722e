package source

import (
	"fmt"
	"strings"
	"testing"
)

// TestCacheIsBoundedByWeight: the cache keeps no more programs than their
// weight allows, however few they are: a program's compiled form weighs
// up to 40 times its code, so 128 programs of a MiB would be gigabytes.
// The least recently used goes first. Before the fix only the count
// bounded it, and the first program was still cached.
func TestCacheIsBoundedByWeight(t *testing.T) {
	body := strings.Repeat("x = x + 1;\n", 16<<10/11)
	codes := make([]string, 4)
	for i := range codes {
		codes[i] = fmt.Sprintf("let x = %d;\n%s", i, body)
	}
	c := NewCache(8, 3*entryWeight(codes[0])) // three of them
	first := make([]*Normalized, len(codes))
	for i, code := range codes {
		n, err := c.Normalize(code, "f.js")
		if err != nil {
			t.Fatal(err)
		}
		first[i] = n
	}
	for i := len(codes) - 1; i >= 0; i-- { // most recent first: no hit evicts another
		n, err := c.Normalize(codes[i], "f.js")
		if err != nil {
			t.Fatal(err)
		}
		if cached, want := n == first[i], i > 0; cached != want {
			t.Errorf("program %d: cached %v, want %v", i, cached, want)
		}
	}
	// One heavier than the whole cache is not kept.
	big := NewCache(8, entryWeight(codes[0])-1)
	a, _ := big.Normalize(codes[0], "f.js")
	if b, _ := big.Normalize(codes[0], "f.js"); a == b {
		t.Error("a program heavier than the cache was cached")
	}
}
