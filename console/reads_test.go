package console_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/console"
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

// The pending actions read the paused runs they show, not every paused
// run whole: 20 paused runs past the page's bound (MaxPendingRuns), of
// 512 kB programs (10 MB), add far less than that to what the page
// allocates.
func TestThePendingListReadsOnlyTheRunsItShows(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	for i := range console.MaxPendingRuns {
		e.pause(fmt.Sprint("note ", i))
	}
	b.get("/")
	shown, _ := b.allocated("/")
	const more, size = 20, 512 << 10
	for range more {
		e.run(`async () => notes.createNote({ text: "later" }) // `+strings.Repeat("p", size), codemode.StatusPaused)
	}
	n, p := b.allocated("/")
	if !strings.Contains(p.body, fmt.Sprintf("%d more paused runs wait", more)) {
		t.Fatalf("the page does not say that %d more paused runs wait:\n%s", more, p.body)
	}
	if n-shown > more*size/10 {
		t.Errorf("%d paused runs of %d-byte programs, not shown, made the page allocate %d bytes more (%d, then %d), want at most %d more",
			more, size, n-shown, shown, n, more*size/10)
	}
}

// The pending actions and the runs read of each run what they show, not
// its console output or result: 10 runs that each printed 512 kB (and
// returned 256 kB, those completed) make each page allocate far less than
// that (each was read whole, the runs page twice).
func TestRunPagesReadNoOutput(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	const runs, size = 10, 512 << 10
	printed := fmt.Sprintf(`console.log("o".repeat(%d));`, size-8)
	for range runs {
		e.run(`async () => { `+printed+` return notes.createNote({ text: "later" }) }`, codemode.StatusPaused)
		e.run(`async () => { `+printed+` return "r".repeat(`+fmt.Sprint(size/2)+`) }`, codemode.StatusCompleted)
	}
	for _, path := range []string{"/", "/runs?limit=20"} {
		b.get(path)
		n, p := b.allocated(path)
		if p.status != http.StatusOK || strings.Count(p.body, "later") < runs {
			t.Fatalf("GET %s: %d, want the %d paused runs:\n%.2000s", path, p.status, runs, p.body)
		}
		if n > runs*size/2 {
			t.Errorf("GET %s of %d runs that each printed %d bytes allocated %d bytes, want at most %d", path, runs, size, n, runs*size/2)
		}
	}
}

// A snippet's code is downloaded reading that snippet, not every one: 80
// snippets of 128 kB programs (10 MB) make a download allocate far less.
func TestASnippetsCodeIsReadAlone(t *testing.T) {
	e := newEnv(t, token)
	const snippets, size = 80, 128 << 10
	id := e.run(`async () => 1 // `+strings.Repeat("p", size), codemode.StatusCompleted)
	for i := range snippets {
		if _, err := e.rt.SaveSnippet(e.ctx, fmt.Sprint("s", i), id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.login(token)
	b.get("/snippets/s7/code")
	n, p := b.allocated("/snippets/s7/code")
	if p.status != http.StatusOK || len(p.body) != size+17 {
		t.Fatalf("GET /snippets/s7/code: %d, %d bytes; want its %d", p.status, len(p.body), size+17)
	}
	if n > snippets*size/5 {
		t.Errorf("a download among %d snippets of %d-byte programs allocated %d bytes, want at most %d", snippets, size, n, snippets*size/5)
	}
}
