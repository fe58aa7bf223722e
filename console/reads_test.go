package console_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// allocated is how many bytes the process allocated while get asked for
// path (the console serves in this process), and the page.
func (b *browser) allocated(path string) (uint64, page) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p := b.get(path)
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc, p
}

// A page's poll of /api/version reads the snippets' names and when each
// was saved, not their code: 20 snippets of 512 kB programs (10 MB) make
// a poll allocate far less than that. The version still changes when a
// snippet is saved, saved again or deleted.
func TestVersionPollsDoNotReadSnippetCode(t *testing.T) {
	e := newEnv(t, token)
	const snippets, size = 20, 512 << 10
	id := e.run(`async () => 1 // `+strings.Repeat("p", size), codemode.StatusCompleted)
	for i := range snippets {
		if _, err := e.rt.SaveSnippet(e.ctx, fmt.Sprint("s", i), id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.login(token)
	v := b.get("/api/version")
	n, p := b.allocated("/api/version")
	if p.status != http.StatusOK || p.body != v.body {
		t.Fatalf("GET /api/version: %d %s, then %s; want the same version", p.status, p.body, v.body)
	}
	if n > snippets*size/10 {
		t.Errorf("a poll with %d snippets of %d-byte programs allocated %d bytes, want at most %d", snippets, size, n, snippets*size/10)
	}
	for what, change := range map[string]func() error{
		"saved":       func() error { _, err := e.rt.SaveSnippet(e.ctx, "new", id, "", nil); return err },
		"saved again": func() error { _, err := e.rt.SaveSnippet(e.ctx, "s0", id, "again", nil); return err },
		"deleted":     func() error { return e.rt.DeleteSnippet(e.ctx, "s1") },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if p := b.get("/api/version"); p.body == v.body {
			t.Errorf("the version did not change when a snippet was %s: %s", what, p.body)
		} else {
			v = p
		}
	}
}
