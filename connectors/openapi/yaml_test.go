package openapi

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestYAMLReadInLinearWork: reading a YAML document takes work linear in
// its size, whatever its shape. goccy/go-yaml parsed a mapping in time and
// memory quadratic in its keys (64,000 keys, 1 MB, took 65 s), so a hostile
// document held a start for minutes. The bytes allocated are the measure
// (not the clock): four times the keys must cost about four times the
// memory, not sixteen.
func TestYAMLReadInLinearWork(t *testing.T) {
	shapes := map[string]func(n int) string{
		"one mapping's keys": func(n int) string {
			var b strings.Builder
			b.WriteString("openapi: 3.0.3\nx-many:\n")
			for i := range n {
				fmt.Fprintf(&b, "  k%d: v%d\n", i, i)
			}
			return b.String()
		},
		"a sequence's items": func(n int) string {
			var b strings.Builder
			b.WriteString("openapi: 3.0.3\nx-many:\n")
			for i := range n {
				fmt.Fprintf(&b, "  - v%d\n", i)
			}
			return b.String()
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			allocated := func(n int) uint64 {
				doc := newDocument([]byte(shape(n)), nil, "")
				var err error
				a := allocatedBy(func() { _, err = doc.jsonText(context.Background()) })
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			small, large := allocated(2000), allocated(8000)
			if ratio := float64(large) / float64(small); ratio > 6 {
				t.Errorf("4 times the entries allocated %.1f times the memory (%d bytes, then %d); want about 4 (linear)", ratio, small, large)
			}
		})
	}
}

// TestYAMLToJSON: a YAML document's JSON form: scalars typed as YAML 1.2
// reads them (numbers as written when JSON can say them), aliases
// expanded, merge keys resolved (own keys win, then the first merged
// mapping), and what JSON cannot hold refused with the line.
func TestYAMLToJSON(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"scalars", "a: 1.0\nb: 0x1F\nc: 1_000\nd: +2\ne: .5\nf: true\ng: ~\nh: '1.0'\ni: 2016-11-15\nj: .inf\nk: 12345678901234567890\nl: |\n  two\n  lines\n",
			`{"a":1.0,"b":31,"c":1000,"d":2,"e":0.5,"f":true,"g":null,"h":"1.0","i":"2016-11-15","j":".inf","k":12345678901234567890,"l":"two\nlines\n"}`},
		{"aliases", "base: &b {x: 1, y: [2]}\ncopy: *b\nin: [*b, {z: *b}]\n", `{"base":{"x":1,"y":[2]},"copy":{"x":1,"y":[2]},"in":[{"x":1,"y":[2]},{"z":{"x":1,"y":[2]}}]}`},
		{"aliases within the depth bound", "a: &a " + strings.Repeat("[", 250) + strings.Repeat("]", 250) + "\nb: " + strings.Repeat("[", 250) + "*a" + strings.Repeat("]", 250) + "\n",
			`{"a":` + strings.Repeat("[", 250) + strings.Repeat("]", 250) + `,"b":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`},
		{"merge keys", "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  x: 0\n  <<: [*a, *b]\n  w: 3\n",
			`{"a":{"x":1,"y":1},"b":{"y":2,"z":2},"c":{"x":0,"y":1,"z":2,"w":3}}`},
		{"chained merge keys", "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n",
			`{"a":{"x":1},"b":{"x":1,"y":2},"c":{"x":1,"y":2,"z":3}}`},
		{"a quoted merge key is a key", "a: {'<<': 1}\n", `{"a":{"<<":1}}`},
		{"a merged quoted merge key", "a: &a {'<<': 1}\nb: {<<: *a}\n", `{"a":{"<<":1},"b":{"<<":1}}`},
		{"empty", "", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := yamlToJSON(context.Background(), []byte(tt.yaml))
			if err != nil || string(got) != tt.want {
				t.Errorf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
	refused := []struct{ name, yaml, want string }{
		{"an alias inside its anchor", "a: &a [1, *a]\n", "anchor &a (line 1) contains an alias to itself"},
		{"a merge inside its anchor", "a: &a {x: 1, <<: *a}\n", "anchor &a (line 1) contains an alias to itself"},
		{"a merge of a scalar", "a: &a 1\nb: {<<: *a}\n", "merge key (<<) at line 1 names neither a mapping"},
		{"a mapping as a key", "? {a: 1}\n: 2\n", "mapping key that is not a string at line 1"},
		{"not YAML", "a: [b\n", "neither JSON nor YAML"},
		{"an alias nested past the bound", "a: &a " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\nb: " + strings.Repeat("[", 300) + "*a" + strings.Repeat("]", 300) + "\n",
			"nests deeper than 512 levels (an alias to &a, line 1)"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := yamlToJSON(context.Background(), []byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %s, %v; want an error saying %q", got, err, tt.want)
			}
		})
	}
}

// TestYAMLMergeKeysBounded: chained merge keys copy every mapping before
// them, so 4,000 of them (143 KB) stand for 8 million members, and 40
// mappings each merging the one before twice stand for 2⁴⁰ merges, even
// of an empty mapping: counted as they are copied, and refused past the
// bound of a JSON document.
func TestYAMLMergeKeysBounded(t *testing.T) {
	var chain, doubling strings.Builder
	chain.WriteString("openapi: 3.0.3\na0: &a0 {x: 1}\n")
	for i := 1; i < 4000; i++ {
		fmt.Fprintf(&chain, "a%d: &a%d\n  <<: *a%d\n  y%d: 1\n", i, i, i-1, i)
	}
	doubling.WriteString("openapi: 3.0.3\na0: &a0 {}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&doubling, "a%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i-1, i-1)
	}
	for name, doc := range map[string]string{"4,000 chained merge keys": chain.String(), "40 doubling merge keys": doubling.String()} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := yamlToJSON(context.Background(), []byte(doc))
		runtime.ReadMemStats(&after)
		if want := fmt.Sprintf("larger than %d MiB as JSON", maxDocumentBytes>>20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s (%d bytes): %v; want %q", name, len(doc), err, want)
		}
		// The work done before refusing, by what it allocated: counting
		// a merged member as its key alone, the chain allocated 1.6 GB
		// (seconds) first.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
			t.Errorf("%s: allocated %d MiB before refusing", name, alloc>>20)
		}
	}
}

// TestYAMLConversionStops: converting a YAML document stops once the
// start's context is done, in the parse as in the writing: a 64 MiB
// document takes seconds to parse and gigabytes of nodes, which a
// canceled start (or Remote.Close) waited for. Allocations are the
// measure: a whole parse of this one allocates over a hundred MiB.
func TestYAMLConversionStops(t *testing.T) {
	doc := writeDoc(t, "openapi: 3.0.3\nx-many:\n"+strings.Repeat("- a\n", 1<<19))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	a := allocatedBy(func() { _, err = New(ctx, Config{Name: "api", Document: doc}) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("New with a canceled context: %v; want context.Canceled", err)
	}
	if a > 16<<20 {
		t.Errorf("a canceled start allocated %d MiB", a>>20)
	}
	// Canceled while parsing (the parser reads 512 bytes at a time), and
	// while writing (its checks come last).
	raw := mustRead(t, doc)
	whole := &stopAfter{Context: context.Background(), n: 1 << 30}
	if _, err := yamlToJSON(whole, raw); err != nil {
		t.Fatal(err)
	}
	if writes := (1 << 19) / yamlCheckEvery; whole.calls < len(raw)/512+writes {
		t.Fatalf("a whole conversion checked its context %d times", whole.calls)
	}
	for _, n := range []int{1, whole.calls / 2, whole.calls - 10} {
		ctx := &stopAfter{Context: context.Background(), n: n}
		if _, err := yamlToJSON(ctx, raw); !errors.Is(err, context.Canceled) {
			t.Errorf("canceled after %d checks: %v; want context.Canceled", n, err)
		}
		if ctx.calls > n+2 {
			t.Errorf("canceled after %d checks, the conversion went on for %d more", n, ctx.calls-n)
		}
	}
}

// TestYAMLSizeBounded: a YAML document over maxYAMLBytes is refused before
// it is parsed, saying what to do: its node tree would take up to about
// 150 times its size (nearly 10 GB at the 64 MiB a JSON document may be).
func TestYAMLSizeBounded(t *testing.T) {
	head := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nx-pad: "
	doc := writeDoc(t, head+strings.Repeat("a", maxYAMLBytes+1-len(head)))
	_, err := New(context.Background(), Config{Name: "api", Document: doc})
	if want := "larger than the 40 MiB a YAML document may be (a JSON one may be 64 MiB): convert it to JSON"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a YAML document of %d bytes: %v; want %q", maxYAMLBytes+1, err, want)
	}
}
