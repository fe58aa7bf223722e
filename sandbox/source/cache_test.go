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
	n0, err := Normalize(codes[0], "f.js")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(8, 3*entryWeight(codes[0], n0)) // three of them (the same length)
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
	big := NewCache(8, entryWeight(codes[0], n0)-1)
	a, _ := big.Normalize(codes[0], "f.js")
	if b, _ := big.Normalize(codes[0], "f.js"); a == b {
		t.Error("a program heavier than the cache was cached")
	}
}

// TestCacheWeighsTheNormalisedSource: esbuild indents nested code, so
// nested code becomes source many times its size (up to MaxNesting times),
// which a cached program keeps twice (the position map's and goja's). A
// program weighs at least that: before the fix it weighed 40 times its code
// (an 8 KiB program held 32 MiB in a 16 MiB cache), so a worker kept it and
// the next program, whoever's, ran short of memory.
func TestCacheWeighsTheNormalisedSource(t *testing.T) {
	code := strings.Repeat(strings.Repeat("{", MaxNesting)+strings.Repeat("}", MaxNesting)+"\n", 100)
	a, err := Normalize(code, "f.js")
	if err != nil {
		t.Fatal(err)
	}
	if src := len(a.pos.src); src < 10*len(code) {
		t.Fatalf("normalised source of %d bytes for %d bytes of code: the nesting no longer grows it", src, len(code))
	}
	// Room for the program as weighed by its code, not for its source.
	c := NewCache(8, 8<<10+40*int64(len(code))+int64(len(a.pos.src)))
	a, _ = c.Normalize(code, "f.js")
	if b, _ := c.Normalize(code, "f.js"); a == b {
		t.Errorf("a program of %d bytes normalised to %d bytes was cached in a cache with room for its code only", len(code), len(a.pos.src))
	}
}
