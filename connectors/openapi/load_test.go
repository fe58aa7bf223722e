package openapi

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/google/go-cmp/cmp"
)

// TestYAMLAndJSONAgree: a YAML document derives as its JSON form does.
func TestYAMLAndJSONAgree(t *testing.T) {
	c := newTest(t, "shop.yaml")
	doc, err := newDocument(mustRead(t, "testdata/shop.yaml"), nil, "").jsonText(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(t.TempDir(), "shop.json")
	if err := os.WriteFile(jsonPath, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := New(context.Background(), Config{Name: "api", Document: jsonPath})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(describe(t, c), describe(t, j)); diff != "" {
		t.Errorf("YAML and JSON derive differently (-yaml +json):\n%s", diff)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDerivationCache: a second start takes the derivation from the
// cache; another document, or another version, derives again; a damaged
// entry is derived again without failing.
func TestDerivationCache(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(doc, mustRead(t, "testdata/shop.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A derivation is stored in the cache, each in a file written anew: a
	// start derived as many times as it wrote entries.
	defer func(v func() string) { buildVersion = v }(buildVersion)
	start := func(version string) (*Connector, int) {
		t.Helper()
		before := cachedDerivations(t, dir)
		buildVersion = func() string { return version } // another build's cache
		c, err := New(context.Background(), Config{Name: "api", Document: doc, CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		c.Close() // the derivation is in the cache once Close returns
		n := 0
		for f, ino := range cachedDerivations(t, dir) {
			if before[f] != ino {
				n++
			}
		}
		return c, n
	}
	first, n := start("v1")
	if n != 1 {
		t.Fatalf("first start derived %d times", n)
	}
	second, n := start("v1")
	if n != 0 {
		t.Fatalf("second start derived %d times; want the cache", n)
	}
	// spec reads it when asked.
	if res, err := second.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"/info/title"}`)); err != nil || string(res.Value) != `"Shop"` {
		t.Errorf("spec of a document not read at start: %s %v", res.Value, err)
	}
	if diff := cmp.Diff(describe(t, first), describe(t, second)); diff != "" {
		t.Errorf("cached derivation differs (-derived +cached):\n%s", diff)
	}
	if _, n = start("v2"); n != 1 {
		t.Errorf("another version derived %d times, want 1", n)
	}
	// v2's derivation replaced v1's (see TestStorePrunesOtherBuilds).
	// Damage it.
	files, _ := filepath.Glob(filepath.Join(dir, "openapi", "derived", "*.gob"))
	if len(files) != 1 {
		t.Fatalf("cached derivations: %v", files)
	}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, n = start("v2"); n != 1 {
		t.Errorf("damaged cache: derived %d times, want 1", n)
	}
	// A changed document derives again; one that changed under a running
	// connector is not served by spec.
	stale, _ := start("v2")
	if err := os.WriteFile(doc, []byte(strings.Replace(string(mustRead(t, "testdata/shop.yaml")), "title: Shop", "title: Shop 2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	c, n := start("v2")
	if n != 1 || c.Capabilities().Description != "Shop 2" {
		t.Errorf("changed document: derived %d times, title %q", n, c.Capabilities().Description)
	}
	if _, err := stale.Call(context.Background(), "spec", nil); err == nil || !strings.Contains(err.Error(), "changed while codemode-mcp ran") {
		t.Errorf("spec of a document changed since the start: %v", err)
	}
}

// cachedDerivations returns the cached derivations under dir: each file
// with its identity (a file written anew has another).
func cachedDerivations(t *testing.T, dir string) map[string]identity {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "openapi", "derived", "*.gob"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]identity{}
	for _, f := range files {
		id, err := fileIdentity(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = id
	}
	return out
}

// TestURLDocument: a document at a URL is fetched and cached; a server
// that answers 304 to its ETag is not downloaded again; offline, the
// cached copy is used with a warning; without a copy, New fails. A
// relative server URL resolves against the document's URL.
func TestURLDocument(t *testing.T) {
	body := mustRead(t, "testdata/notes-3.1.json")
	var gets, full atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		w.Write(body)
	}))
	url := srv.URL + "/specs/notes.json?key=doc-secret-1"
	dir := t.TempDir()
	c, err := New(context.Background(), Config{Name: "notes", Document: url, CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if len(c.Capabilities().Diagnostics) != 0 {
		t.Errorf("warnings: %q", c.Capabilities().Diagnostics)
	}
	if got := c.calls.base.String(); got != srv.URL+"/api" {
		t.Errorf("base URL %q, want %q", got, srv.URL+"/api")
	}
	if c, err := New(context.Background(), Config{Name: "notes", Document: url, CacheDir: dir}); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	if gets.Load() != 2 || full.Load() != 1 {
		t.Errorf("requests %d, full answers %d; want 2 and 1 (the second answered 304)", gets.Load(), full.Load())
	}
	srv.Close()
	c, err = New(context.Background(), Config{Name: "notes", Document: url, CacheDir: dir})
	if err != nil {
		t.Fatalf("offline with a cached copy: %v", err)
	}
	c.Close()
	w := strings.Join(c.Capabilities().Diagnostics, "\n")
	if !strings.Contains(w, "using the copy cached on") || strings.Contains(w, "doc-secret-1") {
		t.Errorf("offline warning %q: want the cached copy named, and no query string", w)
	}
	_, err = New(context.Background(), Config{Name: "notes", Document: url, CacheDir: t.TempDir()})
	if err == nil || strings.Contains(err.Error(), "doc-secret-1") {
		t.Errorf("offline without a copy: %v; want an error without the query string", err)
	}
}

// TestNotOpenAPI: documents that cannot be read or are not OpenAPI are
// errors that say why.
func TestNotOpenAPI(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, body, want string }{
		{"not JSON or YAML", "a: [b\n", "neither JSON nor YAML"},
		{"invalid JSON", "{\"openapi\": \"3.0.0\",\n}", "not valid JSON: line 2, column 1: invalid character '}'"},
		{"no version", `{"info": {"title": "x"}}`, `neither "openapi" nor "swagger"`},
		{"OpenAPI 4", `{"openapi": "4.0.0"}`, `unsupported OpenAPI version "4.0.0" at /openapi`},
		{"Swagger 1.2", `{"swagger": "1.2"}`, `unsupported Swagger version "1.2" at /swagger`},
		{"an object as the version", `{"openapi": {"major": 3}}`, `unsupported OpenAPI version (an object) at /openapi`},
		// A version from a hostile document is clipped, as a warning is.
		{"a long version", `{"openapi": "4` + strings.Repeat("x", 1<<20) + `"}`, `unsupported OpenAPI version "4xxxxx`},
		{"a long Swagger version", `{"swagger": "1` + strings.Repeat("x", 1<<20) + `"}`, `unsupported Swagger version "1xxxxx`},
		{"an array", `[1]`, "the top level is not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(p, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := New(context.Background(), Config{Name: "x", Document: p})
			if err == nil || !strings.Contains(err.Error(), tt.want) || len(err.Error()) > 4*maxMessage {
				t.Errorf("err = %.300v (%d bytes), want it to say %q", err, len(fmt.Sprint(err)), tt.want)
			}
			// The file is named: a server of several documents says which.
			if err != nil && !strings.HasPrefix(err.Error(), "the OpenAPI document "+p+": ") {
				t.Errorf("err = %.300v; want it to name the file %s", err, p)
			}
		})
	}
	// A version written as a number (YAML's unquoted "openapi: 3.1") is
	// read as written, as "swagger: 2.0" is.
	p := filepath.Join(dir, "number.yaml")
	if err := os.WriteFile(p, []byte("openapi: 3.1\ninfo: {title: x, version: '1'}\npaths: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), Config{Name: "x", Document: p}); err != nil {
		t.Errorf("openapi: 3.1 unquoted: %v", err)
	}
	if _, err := New(context.Background(), Config{Name: "x", Document: filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestSpec: spec returns the document, or a part of it, as JSON; a
// pointer that names nothing is the method's error.
func TestSpec(t *testing.T) {
	c := newTest(t, "shop.yaml")
	ctx := context.Background()
	res, err := c.Call(ctx, "spec", nil)
	if err != nil || res.IsError {
		t.Fatal(err, res.Message)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.Value, &doc); err != nil || doc["openapi"] != "3.0.3" {
		t.Errorf("whole document: %v %v", doc["openapi"], err)
	}
	res, _ = c.Call(ctx, "spec", json.RawMessage(`{"pointer":"/paths/~1items~1{id}/get/operationId"}`))
	if string(res.Value) != `"getItem"` {
		t.Errorf("pointer: %s %s", res.Value, res.Message)
	}
	res, _ = c.Call(ctx, "spec", json.RawMessage(`{"pointer":"/nope"}`))
	if !res.IsError || !strings.Contains(res.Message, `nothing at "/nope"`) {
		t.Errorf("missing pointer: %+v", res)
	}
	// A document too large to keep in the log whole asks for a pointer.
	big := filepath.Join(t.TempDir(), "big.json")
	body := `{"openapi":"3.0.0","info":{"title":"big","description":"` + strings.Repeat("x", specWholeLimit) + `"},"paths":{}}`
	if err := os.WriteFile(big, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	bc, err := New(ctx, Config{Name: "big", Document: big})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{``, `{"pointer":"#"}`} { // "#" names the whole document too
		res, _ = bc.Call(ctx, "spec", json.RawMessage(args))
		if !res.IsError || !strings.Contains(res.Message, "too large to return whole") || !strings.Contains(res.Message, "pointer") {
			t.Errorf("large document, %s: %.200s %.200s", args, res.Message, res.Value)
		}
	}
	if res, _ = bc.Call(ctx, "spec", json.RawMessage(`{"pointer":"/info/title"}`)); string(res.Value) != `"big"` {
		t.Errorf("part of a large document: %s", res.Value)
	}
	// A part as large is refused too, naming the pointer.
	res, _ = bc.Call(ctx, "spec", json.RawMessage(`{"pointer":"/info"}`))
	if !res.IsError || !strings.Contains(res.Message, `the part at "/info" is larger than 1024 KiB, too large to return`) || !strings.Contains(res.Message, "smaller part") {
		t.Errorf("large part: %.200s, %d bytes", res.Message, len(res.Value))
	}
}

// TestSpecPartBounded: a part over spec's bound is refused having
// written the bound's worth of it (grown a few times over), not the
// whole part: the 4 MiB array and object allocated 20 MiB each, the 16 MiB string 16 MiB.
func TestSpecPartBounded(t *testing.T) {
	item := `"` + strings.Repeat("x", 16<<10) + `"`
	doc := `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{},` +
		`"x-items":[` + strings.Repeat(item+",", 255) + item + `],` +
		`"x-members":{` + strings.Repeat(`"k":`+item+",", 255) + `"k":` + item + `},` +
		`"x-string":"` + strings.Repeat("x", 16<<20) + `"}`
	c, err := New(context.Background(), Config{Name: "parts", Document: writeDoc(t, doc)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"/info"}`)) // parsed
	for _, ptr := range []string{"/x-items", "/x-members", "/x-string"} {
		var res connectors.Result
		a := allocatedBy(func() { res, _ = c.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"`+ptr+`"}`)) })
		if !res.IsError || !strings.Contains(res.Message, "too large to return") {
			t.Errorf("%s: %.100s %.100s", ptr, res.Message, res.Value)
		}
		if a > 8*specWholeLimit {
			t.Errorf("spec refused the part at %s having allocated %d KiB", ptr, a>>10)
		}
	}
}

// TestYAMLAliasesBounded: a YAML document's aliases are expanded in its
// JSON form, so a few hundred bytes could stand for gigabytes ("billion
// laughs"); one whose JSON form would pass the bound of a JSON document
// is refused before it is written, and one within it loads, its aliases
// expanded.
func TestYAMLAliasesBounded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// x5 is a million 100-byte strings: over 100 MB as JSON.
	var bomb strings.Builder
	bomb.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n")
	bomb.WriteString("x0: &x0 [" + strings.Repeat(strings.Repeat("a", 100)+", ", 9) + strings.Repeat("a", 100) + "]\n")
	for i := 1; i <= 5; i++ {
		prev := fmt.Sprintf("*x%d", i-1)
		fmt.Fprintf(&bomb, "x%d: &x%d [%s]\n", i, i, strings.Repeat(prev+", ", 9)+prev)
	}
	_, err := New(context.Background(), Config{Name: "api", Document: write("bomb.yaml", bomb.String())})
	if want := fmt.Sprintf("larger than %d MiB as JSON", maxDocumentBytes>>20); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a YAML document of %d bytes whose aliases expand past the bound: %v; want it refused (%q)", bomb.Len(), err, want)
	}
	c, err := New(context.Background(), Config{Name: "api", Document: write("alias.yaml",
		"openapi: 3.0.3\ninfo: &info {title: t, version: '1'}\npaths: {}\nx-copy: *info\n")})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"/x-copy/title"}`)); err != nil || string(res.Value) != `"t"` {
		t.Errorf("an alias within the bound: %s %s %v; want it expanded", res.Value, res.Message, err)
	}
}

// TestSpecPointerDoesNotParseAgain: spec({pointer}) looks in the document
// parsed once, not parsed again on every call (GitHub's took 50–100 ms
// and a hundred megabytes a call): a call costs the same few allocations
// whatever the document's size.
func TestSpecPointerDoesNotParseAgain(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.0","info":{"title":"big"},"paths":{},"x-many":{`)
	for i := range 20000 {
		fmt.Fprintf(&b, `%s"k%d":{"v":%d}`, map[bool]string{true: ",", false: ""}[i > 0], i, i)
	}
	b.WriteString(`}}`)
	doc := filepath.Join(t.TempDir(), "many.json")
	if err := os.WriteFile(doc, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), Config{Name: "many", Document: doc})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"pointer":"/x-many/k19999/v"}`)
	allocs := testing.AllocsPerRun(5, func() {
		if res, err := c.Call(context.Background(), "spec", args); err != nil || string(res.Value) != "19999" {
			t.Fatalf("spec: %s %s %v", res.Value, res.Message, err)
		}
	})
	if allocs > 100 {
		t.Errorf("spec({pointer}) on a document of 20,000 members: %.0f allocations a call; want a few (the document parsed once)", allocs)
	}
}

// largeDocument writes a JSON document of n small objects (about 13
// bytes each, and 15 times that parsed) and returns its path and size.
func largeDocument(t *testing.T, n int) (string, int64) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.0","info":{"title":"big","version":"1"},"paths":{},"x-data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"k":%d}`, i)
	}
	b.WriteString(`]}`)
	return writeDoc(t, b.String()), int64(b.Len())
}

// heapHeld returns what the heap holds after a collection.
func heapHeld() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDocumentNotKept: a connector lives as long as the server, so it
// does not hold its document's bytes once it has derived its methods: a
// file, or a fetched document the cache holds, is read again when spec
// needs it (and refused if it changed meanwhile).
func TestDocumentNotKept(t *testing.T) {
	path, size := largeDocument(t, 200_000)
	body := mustRead(t, path)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	dir := t.TempDir()
	for _, tc := range []struct{ name, doc, cacheDir string }{
		{"a file, no cache", path, ""},
		{"a file, first start", path, dir},
		{"a URL", srv.URL + "/large.json", dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := heapHeld()
			c, err := New(context.Background(), Config{Name: "large", Document: tc.doc, CacheDir: tc.cacheDir})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if held := heapHeld() - before; held > size/4 {
				t.Errorf("the connector holds %d KiB; the document is %d KiB: its bytes are kept", held>>10, size>>10)
			}
			res, err := c.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"/x-data/199999/k"}`))
			if err != nil || string(res.Value) != "199999" {
				t.Errorf("spec: %s %s %v", res.Value, res.Message, err)
			}
		})
	}
	// The cache's copy of a fetched document changed under the connector
	// (another process fetched a newer one): spec says so.
	c, err := New(context.Background(), Config{Name: "large", Document: srv.URL + "/large.json", CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := os.WriteFile(cachePath(dir, "documents", srv.URL+"/large.json", ".doc"), []byte(`{"openapi":"3.0.0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), "spec", nil); err == nil || !strings.Contains(err.Error(), "changed while codemode-mcp ran") {
		t.Errorf("spec of a fetched document whose cached copy changed: %v", err)
	}
}

// TestSpecForgetsTheDocument: spec keeps the document it parsed while
// programs ask for parts of it, and forgets it specKeep after the last
// call, so that the server does not hold it (GitHub's is about 35 MB
// parsed) for the rest of its life.
func TestSpecForgetsTheDocument(t *testing.T) {
	path, size := largeDocument(t, 200_000)
	synctest.Test(t, func(t *testing.T) {
		before := heapHeld()
		c, err := New(context.Background(), Config{Name: "large", Document: path})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		spec := func() {
			t.Helper()
			if res, err := c.Call(context.Background(), "spec", json.RawMessage(`{"pointer":"/x-data/5/k"}`)); err != nil || string(res.Value) != "5" {
				t.Fatalf("spec: %s %s %v", res.Value, res.Message, err)
			}
		}
		spec()
		time.Sleep(specKeep - time.Second)
		if a := allocatedBy(spec); a > uint64(size/4) {
			t.Errorf("spec %v after the last call allocated %d KiB; want the document kept", specKeep-time.Second, a>>10)
		}
		time.Sleep(specKeep)
		synctest.Wait()
		if held := heapHeld() - before; held > size/4 {
			t.Errorf("%v after the last spec call the connector holds %d KiB; the document is %d KiB", specKeep, held>>10, size>>10)
		}
		runtime.KeepAlive(c)
	})
}

// TestDamagedDerivationCache: a cached derivation that is not the one
// this build wrote for this document (truncated, a byte changed, another
// document's, crafted, too large) is not used: the start derives again,
// logs why at debug level, and reading the file allocates nothing like
// what it claims or weighs.
func TestDamagedDerivationCache(t *testing.T) {
	shop, notes := mustRead(t, "testdata/shop.yaml"), mustRead(t, "testdata/notes-3.1.json")
	docDir := t.TempDir()
	shopDoc, notesDoc := filepath.Join(docDir, "shop.yaml"), filepath.Join(docDir, "notes.json")
	for p, b := range map[string][]byte{shopDoc: shop, notesDoc: notes} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := func(dir, doc string, logs io.Writer) *Connector {
		t.Helper()
		log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, err := New(context.Background(), Config{Name: "api", Document: doc, CacheDir: dir, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		c.Close() // the derivation is in the cache once Close returns
		return c
	}
	want := describe(t, start("", shopDoc, io.Discard))
	good := t.TempDir()
	start(good, shopDoc, io.Discard)
	start(good, notesDoc, io.Discard)
	cached := func(doc []byte) []byte {
		return mustRead(t, derivedCache{dir: good}.path(hashOf(doc)))
	}
	valid := cached(shop)
	if !bytes.Contains(valid, []byte("/login")) {
		t.Fatalf("the cached derivation does not hold %q", "/login")
	}
	for _, tc := range []struct {
		name  string
		write func(path string) error
	}{
		{"truncated", func(p string) error { return os.WriteFile(p, valid[:len(valid)/2], 0o600) }},
		{"a byte changed", func(p string) error {
			return os.WriteFile(p, bytes.Replace(valid, []byte("/login"), []byte("/logix"), 1), 0o600)
		}},
		{"another document's", func(p string) error { return os.WriteFile(p, cached(notes), 0o600) }},
		// Gob makes a map of the size a stream claims before reading its
		// members: 90 bytes claiming 4 million shared schemas.
		{"a map bomb", func(p string) error { return os.WriteFile(p, gobMapBomb(t, 1<<22), 0o600) }},
		{"too large", func(p string) error {
			if err := os.WriteFile(p, valid, 0o600); err != nil {
				return err
			}
			return os.Truncate(p, 256<<20) // sparse: nothing written
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := derivedCache{dir: dir}.path(hashOf(shop))
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			var logs fixture.SyncBuffer
			var c *Connector
			a := allocatedBy(func() { c = start(dir, shopDoc, &logs) })
			if diff := cmp.Diff(want, describe(t, c)); diff != "" {
				t.Errorf("methods differ from the document's (-derived +started):\n%s", diff)
			}
			if a > 64<<20 {
				t.Errorf("the start allocated %d MiB", a>>20)
			}
			if l := logs.String(); !strings.Contains(l, "level=DEBUG") || !strings.Contains(l, "deriving again") {
				t.Errorf("log %q: want a debug line saying the cached derivation is not used", l)
			}
			if d, err := (derivedCache{dir: dir}).load(hashOf(shop), int64(len(shop))); d == nil || err != nil {
				t.Errorf("the derivation was not cached in its place: %v", err)
			}
		})
	}
}

// gobMapBomb is a gob stream of a derivation whose Defs claims n members
// and has one.
func gobMapBomb(t *testing.T, n uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(struct{ Defs map[string][]byte }{map[string][]byte{"a": []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	// Messages are a length (one byte here) and their bytes; the last is
	// the value: its type id (2 bytes), the field delta, the map's count
	// (1) and its member.
	var msgs [][]byte
	for s := b.Bytes(); len(s) > 0; s = s[1+int(s[0]):] {
		msgs = append(msgs, s[1:1+int(s[0])])
	}
	last := msgs[len(msgs)-1]
	if last[3] != 1 {
		t.Fatalf("unexpected gob value message %x", last)
	}
	msgs[len(msgs)-1] = slices.Concat(last[:3], []byte{0xfc, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, last[4:])
	var out []byte
	for _, m := range msgs {
		out = append(append(out, byte(len(m))), m...)
	}
	return out
}

// TestCachedFilesTooLarge: what the cache keeps beside a document and
// every start reads (the copy of a fetched document, for its ETag; the
// record of a file's identity) is not read when it is larger than it can
// be: the document is fetched, or read, again.
func TestCachedFilesTooLarge(t *testing.T) {
	body := mustRead(t, "testdata/notes-3.1.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	file, err := filepath.Abs("testdata/notes-3.1.json")
	if err != nil {
		t.Fatal(err)
	}
	for doc, kind := range map[string]string{srv.URL + "/notes.json": "documents/.doc", file: "files/.txt"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			start := func() *Connector {
				c, err := New(context.Background(), Config{Name: "notes", Document: doc, CacheDir: dir})
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return c
			}
			start()
			kind, ext, _ := strings.Cut(kind, "/")
			if err := os.Truncate(cachePath(dir, kind, doc, ext), maxDocumentBytes+1); err != nil { // sparse: nothing written
				t.Fatal(err)
			}
			var c *Connector
			if a := allocatedBy(func() { c = start() }); a > 32<<20 {
				t.Errorf("the start allocated %d MiB", a>>20)
			}
			if len(c.tools) != 3 { // notes' one operation, request and spec
				t.Errorf("%d methods, want 3", len(c.tools))
			}
		})
	}
}

// allocatedBy returns the bytes f allocated (the measure of work done
// without a clock; tests do not run in parallel).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
