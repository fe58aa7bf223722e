package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/catalog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testDocuments are the documents of testdata with their golden files.
var testDocuments = []string{"shop.yaml", "zoo-swagger2.json", "notes-3.1.json"}

// newTest starts a connector on a testdata document.
func newTest(t *testing.T, doc string, mod ...func(*Config)) *Connector {
	t.Helper()
	cfg := Config{Name: "api", Document: filepath.Join("testdata", doc)}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// declarations is what `codemode-mcp types` prints of a connector.
func declarations(t testing.TB, c *Connector) string {
	t.Helper()
	cat, err := catalog.New(context.Background(), []catalog.Source{{Connector: c}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	decls, err := cat.Declarations(c.Name())
	if err != nil {
		t.Fatal(err)
	}
	return decls
}

// describe renders what a connector derived, for golden files.
func describe(t *testing.T, c *Connector) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", c.Capabilities().Description)
	for _, w := range c.Capabilities().Diagnostics {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, tl := range c.tools {
		flags := ""
		if tl.RequiresApproval {
			flags += " approval"
		}
		if *tl.Annotations.ReadOnly {
			flags += " read-only"
		}
		if tl.Deprecated {
			flags += " deprecated"
		}
		fmt.Fprintf(&b, "\n## %s (%s)%s\n", tl.Name, tl.SourceName, flags)
		if op := c.ops[tl.SourceName]; op != nil {
			opj, _ := json.Marshal(op)
			fmt.Fprintf(&b, "op: %s\n", opj)
		}
		fmt.Fprintf(&b, "input: %s\noutput: %s\n", indentJSON(t, tl.InputSchema), indentJSON(t, tl.OutputSchema))
	}
	fmt.Fprintf(&b, "\n## definitions\n%s\n", indentJSON(t, c.Capabilities().Definitions))
	return b.String()
}

func indentJSON(t *testing.T, raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return out.String()
}

// golden compares got with testdata/<file>, or rewrites it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestDeriveGolden: the tools, operations, definitions and declarations
// derived from each test document. The .ts files are compiled with
// tsc --strict by the end-to-end suite.
func TestDeriveGolden(t *testing.T) {
	for _, doc := range testDocuments {
		t.Run(doc, func(t *testing.T) {
			c := newTest(t, doc)
			golden(t, doc+".derived.txt", describe(t, c))
			golden(t, doc+".ts", declarations(t, c))
		})
	}
}

// TestOutputByDecoding: a response's declared type is what the call
// decodes its media type to (decodeBody): YAML and JavaScript are text,
// so a string; octet-stream is a Binary.
func TestOutputByDecoding(t *testing.T) {
	for mt, want := range map[string]string{
		"application/yaml":         `{"type":"string"}`,
		"application/javascript":   `{"type":"string"}`,
		"application/problem+json": `{"type":"integer"}`,
		"application/octet-stream": binarySchema,
	} {
		doc := `{"openapi":"3.0.0","paths":{"/x":{"get":{"responses":{"200":{"content":{"` + mt + `":{"schema":{"type":"integer"}}}}}}}}}`
		c, err := New(context.Background(), Config{Name: "api", Document: writeDoc(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c.tools[0].OutputSchema); got != want {
			t.Errorf("%s: output %s, want %s", mt, got, want)
		}
	}
}

// TestDerivedSchemasBounded: a schema copied where it is used costs its
// size once per use, so a small document could derive gigabytes (a large
// schema referred to a thousand times, a large shared response of a
// thousand operations, a path item ten thousand paths name). The derivation is bounded (eight times the
// document's size, 16 MiB at least: the APIs.guru directory derives at
// most 2.5 times its size) and a document past it is refused.
func TestDerivedSchemasBounded(t *testing.T) {
	big := `{"type":"number","maximum":` + strings.Repeat("9", 100<<10) + `}` // copied as it is written: quick
	var refs, ops, items []string
	for i := range 1000 {
		refs = append(refs, fmt.Sprintf(`"p%d":{"$ref":"#/x-big"}`, i))
		ops = append(ops, fmt.Sprintf(`"/r%d":{"get":{"responses":{"200":{"$ref":"#/components/responses/big"}}}}`, i))
	}
	// A path item of eight operations, each with 16 KB of tags and a long
	// description, that 10,000 paths name: 80,000 methods, 1.3 GB.
	var tags, item []string
	for i := range 64 {
		tags = append(tags, fmt.Sprintf("%q", fmt.Sprint(i, strings.Repeat("t", 250))))
	}
	for _, m := range httpMethods {
		item = append(item, `"`+m+`":{"description":"`+strings.Repeat("d", 1200)+`","tags":[`+strings.Join(tags, ",")+`]}`)
	}
	items = append(items, `"/a":{`+strings.Join(item, ",")+`}`)
	for i := range 10000 {
		items = append(items, fmt.Sprintf(`"/p%d":{"$ref":"#/paths/~1a"}`, i))
	}
	for name, doc := range map[string]string{
		"copied in place": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"x-big":` + big + `,` +
			`"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{` + strings.Join(refs, ",") + `}}}}}}}}}`,
		"a shared response": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},` +
			`"components":{"responses":{"big":{"description":"d","content":{"application/json":{"schema":` + big + `}}}}},` +
			`"paths":{` + strings.Join(ops, ",") + `}}`,
		"a path item many paths name": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{` + strings.Join(items, ",") + `}}`,
	} {
		p := filepath.Join(t.TempDir(), "doc.json")
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		if a := allocatedBy(func() { _, err = New(context.Background(), Config{Name: "api", Document: p}) }); a > 256<<20 {
			t.Errorf("%s: refusing it allocated %d MiB", name, a>>20)
		}
		if err == nil || !strings.Contains(err.Error(), "the derived methods would be larger than") {
			t.Errorf("%s: a document of %d bytes deriving about 100 MB or more: %v; want it refused", name, len(doc), err)
		}
	}
}

// TestWarningsBounded: a warning names where it is, and a document can
// put many problems under one long path; each warning is bounded, so the
// warnings (at most maxWarnings of them) are too.
func TestWarningsBounded(t *testing.T) {
	path := "/" + strings.Repeat("p", 1<<20)
	var params []string
	for i := range maxWarnings {
		params = append(params, fmt.Sprintf(`{"name":"v%d","in":"path"}`, i))
	}
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"` + path + `":{"get":{"parameters":[` + strings.Join(params, ",") + `]}}}}`
	p := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), Config{Name: "api", Document: p, BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range c.Capabilities().Diagnostics {
		n += len(w)
	}
	if n > 100<<10 {
		t.Errorf("%d warnings of %d bytes from a document of %d bytes; want each bounded", len(c.Capabilities().Diagnostics), n, len(doc))
	}
}

// TestWarningsPastTheCapNotKept: warnings past the hundred kept are only
// counted; telling one seen before from a new one must not keep its text
// (up to 1.2 KB each), or a document with a million distinct problems
// would hold about a gigabyte while it derives.
func TestWarningsPastTheCapNotKept(t *testing.T) {
	d := &deriver{warned: map[uint64]bool{}}
	long := strings.Repeat("x", 4*maxMessage)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 20000
	for i := range n {
		d.warn(strconv.Itoa(i) + long)
	}
	d.warn("0" + long) // seen before: not counted again
	runtime.GC()
	runtime.ReadMemStats(&after)
	if retained := int64(after.HeapAlloc) - int64(before.HeapAlloc); retained > 4<<20 {
		t.Errorf("%d distinct warnings of %d bytes kept %d bytes; want their text not kept", n, len(long), retained)
	}
	if len(d.warnings) != maxWarnings || d.dropped != n-maxWarnings {
		t.Errorf("kept %d, dropped %d; want %d and %d", len(d.warnings), d.dropped, maxWarnings, n-maxWarnings)
	}
	runtime.KeepAlive(d)
}

// TestServerVariablesBounded: a server URL's variables are replaced by
// their defaults once, in one pass over the URL, and a URL longer than
// maxServerURL is ignored with a warning: replacing them variable after
// variable let a default bring in the next variable, so a 2.8 KB document
// made a 27 MB URL (and one more level, 8 GB).
func TestServerVariablesBounded(t *testing.T) {
	doc := `{"openapi":"3.0.0","servers":[{"url":"` + strings.Repeat("{a}", 300) + `","variables":{"a":{"default":"` + strings.Repeat("{b}", 300) +
		`"},"b":{"default":"` + strings.Repeat("{c}", 300) + `"},"c":{"default":"x"}}}],"paths":{"/p":{"get":{"servers":[{"url":"https://{h}.example/{v}","variables":{"h":{"default":"{v}"},"v":{"default":"v1"}}}]}}}}`
	root, ok := parseJSON([]byte(doc))
	if !ok {
		t.Fatal("bad test document")
	}
	d, err := derive(context.Background(), &root, len(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Server) > maxServerURL || !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "longer than") }) {
		t.Errorf("server URL of %d bytes, warnings %q; want it ignored with a warning", len(d.Server), d.Warnings)
	}
	if got, want := d.Methods[0].Op.Server, "https://{v}.example/v1"; got != want {
		t.Errorf("operation server %q, want %q (a default is not searched for variables)", got, want)
	}
}

// stopAfter is a context whose Err is context.Canceled from its n+1th
// call on; calls counts them.
type stopAfter struct {
	context.Context
	n, calls int
}

func (c *stopAfter) Err() error {
	if c.calls++; c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// Deriving stops, with the context's error, at the first operation or
// shared schema after its context is done: Close and a canceled start do
// not wait for a large document to be derived.
func TestDeriveStopsWhenCanceled(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"openapi":"3.0.0","paths":{`)
	for i := range 1000 {
		fmt.Fprintf(&doc, `%s"/p%d":{"get":{"responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S%d"}}}}}},"post":{}}`, map[bool]string{true: ","}[i > 0], i, i)
	}
	doc.WriteString(`},"components":{"schemas":{`)
	for i := range 1000 {
		fmt.Fprintf(&doc, `%s"S%d":{"type":"object"}`, map[bool]string{true: ","}[i > 0], i)
	}
	doc.WriteString(`}}}`)
	root, ok := parseJSON([]byte(doc.String()))
	if !ok {
		t.Fatal("bad test document")
	}
	// Once without canceling, to count the checks a whole derivation makes.
	all := &stopAfter{Context: context.Background(), n: math.MaxInt}
	if _, err := derive(all, &root, doc.Len()); err != nil {
		t.Fatal(err)
	}
	// 1000 paths: one check each and one per operation; then one per
	// shared schema; and one per checkEvery schemas converted (2,000 of
	// them, a response's and a shared one's).
	if all.calls != 4000+2000/checkEvery {
		t.Fatalf("a whole derivation checked its context %d times; want 4001 (one per path, operation and shared schema, and one per %d schemas)", all.calls, checkEvery)
	}
	for _, n := range []int{0, 10, 3500} { // before, during the operations, during the shared schemas
		ctx := &stopAfter{Context: context.Background(), n: n}
		d, err := derive(ctx, &root, doc.Len())
		if !errors.Is(err, context.Canceled) || d != nil {
			t.Errorf("canceled after %d checks: %v; want context.Canceled", n, err)
		}
		// Past the cancelation, at most a path's operations check once each
		// and the loops once to stop.
		if ctx.calls > n+len(httpMethods)+2 {
			t.Errorf("canceled after %d checks, derivation went on for %d more", n, ctx.calls-n)
		}
	}
}

// A cancelation reaches inside one operation and one schema: deriving an
// operation of 50,000 parameters, a body of 50,000 properties or a
// shared schema of as many stops within checkEvery of them, with the
// context's error; what the canceled derivation allocated shows how far
// it went. Checked only between operations, each was derived whole after
// the cancelation (the parameters' 70 MiB of allocations), and one
// operation of 1.2 million parameters held a canceled start ≈10 s (34 s
// on a loaded machine).
func TestDeriveStopsInsideAnOperation(t *testing.T) {
	const n = 50_000
	list := func(format string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(format, i)
		}
		return strings.Join(items, ",")
	}
	props := `{"type":"object","properties":{` + list(`"p%d":{"type":"string"}`) + `}}`
	for _, tt := range []struct {
		name, doc string
		checks    int // the context's checks before the one that finds it canceled
	}{
		// The first check is the path's, before its operation.
		{"parameters", `{"openapi":"3.0.0","paths":{"/p":{"get":{"parameters":[` + list(`{"name":"p%d","in":"query","schema":{"type":"string"}}`) + `]}}}}`, 1},
		{"body properties", `{"openapi":"3.0.0","paths":{"/p":{"post":{"requestBody":{"content":{"application/json":{"schema":` + props + `}}}}}}}`, 1},
		// Then the derive loop's after the path, and the shared schema's.
		{"shared schema properties", `{"openapi":"3.0.0","paths":{"/p":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S"}}}}}}},"components":{"schemas":{"S":` + props + `}}}`, 3},
	} {
		root, ok := parseJSON([]byte(tt.doc))
		if !ok {
			t.Fatalf("%s: bad test document", tt.name)
		}
		var d *derivation
		var err error
		whole := allocatedBy(func() { d, err = derive(context.Background(), &root, len(tt.doc)) })
		if err != nil || whole < 8<<20 {
			t.Fatalf("%s: the whole derivation: %v, %d KiB allocated; want one that costs more", tt.name, err, whole>>10)
		}
		ctx := &stopAfter{Context: context.Background(), n: tt.checks}
		a := allocatedBy(func() { d, err = derive(ctx, &root, len(tt.doc)) })
		if !errors.Is(err, context.Canceled) || d != nil {
			t.Errorf("%s: canceled inside: %v; want context.Canceled", tt.name, err)
		}
		if a > 1<<20 {
			t.Errorf("%s: canceled inside, deriving went on: %d KiB allocated (the whole derivation: %d KiB)", tt.name, a>>10, whole>>10)
		}
	}
}

// An operationId or path longer than its bound is ignored with a warning
// (the method named by its HTTP method and path; the path's operations
// skipped): a megabyte one made a megabyte name in every declaration and
// warning (a 3 MB document gave 8 MB of declarations, 3 MB of warnings).
func TestLongNamesBounded(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	doc := `{"openapi":"3.0.0","paths":{"/` + long + `":{"get":{}},"/q":{"get":{"operationId":"` + long + `","tags":["t","` + long + `"]},"put":{"operationId":"` + long + `"}}}}`
	file := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTest(t, "", func(cfg *Config) { cfg.Document = file })
	var names []string
	for _, tool := range c.tools {
		names = append(names, tool.Name)
	}
	if want := []string{"get_q", "put_q", methodRequest, methodSpec}; !slices.Equal(names, want) {
		t.Errorf("methods %.200q, want %q", names, want)
	}
	if tags := c.tools[0].Tags; !slices.Equal(tags, []string{"t"}) {
		t.Errorf("tags %.200q, want [t]", tags)
	}
	if decls := declarations(t, c); len(decls) > 64<<10 {
		t.Errorf("declarations of %d bytes", len(decls))
	}
	diags := strings.Join(c.Capabilities().Diagnostics, "\n")
	for _, want := range []string{"path \"/aaa", "longer than 1024 bytes; skipped", "operationId \"aaa", "longer than 256 bytes; ignored", "tag \"aaa"} {
		if !strings.Contains(diags, want) {
			t.Errorf("warnings %.400q do not say %q", diags, want)
		}
	}
	if len(diags) > 4<<10 {
		t.Errorf("warnings of %d bytes", len(diags))
	}
}

// A start whose context is done stops before deriving the document, with
// the context's error (a file is read whatever the context).
func TestNewCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := New(ctx, Config{Name: "api", Document: filepath.Join("testdata", "shop.yaml")})
	if !errors.Is(err, context.Canceled) || c != nil {
		t.Errorf("New with a canceled context: %v; want context.Canceled", err)
	}
}

// The warnings of skipped operations (names taken, operationIds used
// twice) are bounded as the document's are: a document of many operations
// named alike gave one warning each, a 64 MiB one millions.
func TestSkippedOperationWarningsBounded(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"openapi":"3.0.0","paths":{`)
	for i := range 1000 {
		fmt.Fprintf(&doc, `%s"/p%d":{"get":{"operationId":"x"},"put":{"operationId":"spec"}}`, map[bool]string{true: ","}[i > 0], i)
	}
	doc.WriteString(`}}`)
	file := filepath.Join(t.TempDir(), "alike.json")
	if err := os.WriteFile(file, []byte(doc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTest(t, "", func(cfg *Config) { cfg.Document = file })
	diags := c.Capabilities().Diagnostics
	if len(diags) > maxWarnings+2 {
		t.Errorf("%d warnings; want at most %d and a count of the rest", len(diags), maxWarnings+2)
	}
	if !slices.Contains(diags, "… and 1899 more operations skipped") {
		t.Errorf("warnings %.300q; want a count of those left out", diags)
	}
}

// An operation's tags past maxTags are dropped with a warning: 100,000 of
// them were each a tag of the method, in its search document and its
// `tag:` filter matching.
func TestManyTagsBounded(t *testing.T) {
	var tags []string
	for i := range 100_000 {
		tags = append(tags, fmt.Sprintf("%q", fmt.Sprint("t", i)))
	}
	doc := `{"openapi":"3.0.0","paths":{"/q":{"get":{"tags":[` + strings.Join(tags, ",") + `]}}}}`
	c := newTest(t, "", func(cfg *Config) { cfg.Document = writeDoc(t, doc) })
	if got := c.tools[0].Tags; len(got) != maxTags || got[0] != "t0" || got[maxTags-1] != fmt.Sprint("t", maxTags-1) {
		t.Errorf("%d tags %.100q; want the first %d", len(got), got, maxTags)
	}
	diags := strings.Join(c.Capabilities().Diagnostics, "\n")
	if want := fmt.Sprintf("GET /q: 100000 tags; only the first %d are kept", maxTags); !strings.Contains(diags, want) {
		t.Errorf("warnings %.400q do not say %q", diags, want)
	}
}
