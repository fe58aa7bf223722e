package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/console"
)

// bidi is a right-to-left override: "exe.txt" reads as "txt.exe".
const bidi = "\u202e"

// gate is a native connector whose one method, request, is generic: its
// Router says a call reaches the path the program names, and a rollback
// reverts it natively, failing with what its source said. Both texts
// hold what a program or a downstream wrote.
type gate struct{}

func (gate) Name() string { return "gate" }
func (gate) Close() error { return nil }

func (g gate) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Router: g, Reverter: g}
}

func (gate) Tools(context.Context) ([]connectors.Tool, error) {
	return []connectors.Tool{{Name: "request", SourceName: "request", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (gate) Call(context.Context, string, json.RawMessage) (connectors.Result, error) {
	return connectors.Result{Value: json.RawMessage(`{}`)}, nil
}

func (gate) Route(_ string, args json.RawMessage) (connectors.Route, bool, error) {
	var a struct{ Path string }
	if err := json.Unmarshal(args, &a); err != nil {
		return connectors.Route{}, false, err
	}
	return connectors.Route{Paths: []string{a.Path}}, true, nil
}

func (gate) Revertible(string) bool { return true }

func (gate) Revert(context.Context, string, json.RawMessage, json.RawMessage) error {
	return errors.New("the server said: undo of exe." + bidi + "txt refused")
}

// What needs approval and why, and why a rollback failed, are shown with
// their hidden characters marked, as arguments and errors are: the reason
// names the path a program wrote, the failure what a downstream said.
func TestReasonsAndRollbackFailuresShowHiddenCharacters(t *testing.T) {
	e := newEnvWith(t, console.Options{Token: token}, catalog.Source{Connector: gate{}, Approve: []string{"path:/admin/*"}})
	o, err := e.rt.Execute(e.ctx, `async () => gate.request({ path: "/admin/exe.`+bidi+`txt" })`, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := o.ExecutionID
	b := e.browser()
	b.login(token)
	marked := `<mark class="hid" title="hidden character U+202E">\u202E</mark>`
	p := b.get("/runs/" + id)
	if !strings.Contains(p.body, "matches the path /admin/exe."+marked+"txt") || strings.ContainsRune(p.body, '\u202e') {
		t.Errorf("the reason for approval does not show its hidden character marked:\n%s", p.body)
	}
	csrf, digest := form(t, p, id)
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", p.status, p.body)
	}
	if p := b.do("POST", "/runs/"+id+"/rollback", url.Values{"csrf": {csrf}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("rollback: %d\n%s", p.status, p.body)
	}
	p = b.get("/runs/" + id)
	if !strings.Contains(p.body, "could not be reverted") || !strings.Contains(p.body, "undo of exe."+marked+"txt refused") || strings.ContainsRune(p.body, '\u202e') {
		t.Errorf("the rollback's failure does not show its hidden character marked:\n%s", p.body)
	}
}

// Why a request was refused is shown with its hidden characters marked:
// it may quote what an issuer or a downstream said.
func TestProblemsShowHiddenCharacters(t *testing.T) {
	e, so, _ := newSignOnEnv(t)
	b := e.browser()
	so.answer(fmt.Errorf("the issuer said: exe.%stxt: %w", bidi, codemode.ErrNotAllowed))
	p := b.get("/auth/callback?state=" + url.QueryEscape(b.start("/")) + "&code=c0de")
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `the issuer said: exe.<mark class="hid" title="hidden character U+202E">\u202E</mark>txt`) || strings.ContainsRune(p.body, '\u202e') {
		t.Errorf("a refused sign-in's problem does not show its hidden character marked: %d\n%s", p.status, p.body)
	}
}

// wordyGate is a gate whose revert fails with a very long message, as a
// downstream may answer.
type wordyGate struct{ gate }

func (g wordyGate) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Router: g, Reverter: g}
}

func (wordyGate) Revert(context.Context, string, json.RawMessage, json.RawMessage) error {
	return errors.New("the server said: " + strings.Repeat("x", 200_000))
}

// A rollback's failure is cut on the page as a call's error is: a
// downstream's long answer does not make the page as long.
func TestRollbackFailuresAreCut(t *testing.T) {
	e := newEnvWith(t, console.Options{Token: token}, catalog.Source{Connector: wordyGate{}, Approve: []string{"path:/admin/*"}})
	o, err := e.rt.Execute(e.ctx, `async () => gate.request({ path: "/admin/x" })`, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := o.ExecutionID
	b := e.browser()
	b.login(token)
	csrf, digest := form(t, b.get("/runs/"+id), id)
	if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", p.status, p.body)
	}
	if p := b.do("POST", "/runs/"+id+"/rollback", url.Values{"csrf": {csrf}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("rollback: %d\n%s", p.status, p.body)
	}
	p := b.get("/runs/" + id)
	if !strings.Contains(p.body, "could not be reverted") || !strings.Contains(p.body, "Cut: the first") || strings.Contains(p.body, strings.Repeat("x", 10_000)) {
		t.Errorf("the rollback's failure is not cut (page of %d bytes)", len(p.body))
	}
}

// A page's poll of /api/version reads what its fingerprint needs of the
// paused runs (their ids and when they changed), not their programs: 40
// paused runs of 64 kB programs (2.6 MB) make a poll allocate far less
// than that. The fingerprint still changes when one of them does.
func TestVersionPollsDoNotReadPausedPrograms(t *testing.T) {
	e := newEnvWith(t, console.Options{Token: token}, catalog.Source{Connector: gate{}, Approve: []string{"path:/admin/*"}})
	const runs, size = 40, 64 << 10
	var ids []string
	for range runs {
		o, err := e.rt.Execute(e.ctx, `async () => gate.request({ path: "/admin/x" }) // `+strings.Repeat("p", size), nil)
		if err != nil || o.Status != codemode.StatusPaused {
			t.Fatalf("Execute: %+v, %v; want paused", o, err)
		}
		ids = append(ids, o.ExecutionID)
	}
	b := e.browser()
	b.login(token)
	before := b.get("/api/version")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p := b.get("/api/version")
	runtime.ReadMemStats(&m1)
	if p.status != http.StatusOK || p.body != before.body {
		t.Fatalf("GET /api/version: %d %s, then %s; want the same version", p.status, p.body, before.body)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > runs*size/4 {
		t.Errorf("a poll with %d paused runs of %d-byte programs allocated %d bytes, want at most %d", runs, size, n, runs*size/4)
	}
	// The oldest paused run (not among the newest listed) is rejected:
	// the version changes.
	if _, err := e.rt.Reject(e.ctx, ids[0], 0); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/api/version"); p.body == before.body {
		t.Errorf("the version did not change when a paused run was rejected: %s", p.body)
	}
}

// A text a page shows cut is bounded in the HTML it makes, not only in
// characters: a hidden character is shown as a marked escape of about 60
// bytes and a line of a program or of console output starts a line of
// about as many, so 20,000 of them (the characters a program may show)
// would make 1.3 MB; and a value of many small members is laid out in
// spans many times its size, so past the bound it is shown as its text.
// Each page stays within about 10 bytes a character it may show.
func TestCutTextsAreBoundedInHTML(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	const textBound, valueBound = 20_000 * 10, 8_000 * 10
	for _, tt := range []struct {
		what, code, want string
		bound            int
	}{
		{"a program of hidden characters", `async () => 1 // ` + strings.Repeat("\u200b", 30_000), "Cut: the first", textBound},
		{"a program of short lines", `async () => 1` + strings.Repeat("\n//", 10_000), "Cut: the first", textBound},
		{"console output of empty lines", `async () => { for (let i = 0; i < 30000; i++) console.log(""); return 1 }`, "Cut: the first", textBound},
		{"a result of hidden characters", `async () => "\u200b".repeat(7000)`, "Cut: the first", valueBound},
		{"a result of many members", `async () => Array(3000).fill(0)`, "[0,0,0,0,0,", valueBound},
	} {
		id := e.run(tt.code, codemode.StatusCompleted)
		p := b.get("/runs/" + id)
		if p.status != http.StatusOK || !strings.Contains(p.body, tt.want) {
			t.Errorf("%s: %d, no %q on the run's page", tt.what, p.status, tt.want)
		}
		if len(p.body) > tt.bound {
			t.Errorf("%s: the run's page is %d bytes, want at most %d", tt.what, len(p.body), tt.bound)
		}
	}
}
