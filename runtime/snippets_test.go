package runtime_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

func TestSnippetsSaveRunSearch(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	src := e.run(`async (input) => {
		const a = input?.a ?? 1;
		return await fx.get_sum({ a, b: 2 });
	}`, nil)
	mustStatus(t, src, codemode.StatusCompleted)

	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)
	sn, err := e.rt.SaveSnippet(e.ctx, "addTwo", src.ExecutionID, "Adds two to a number.", schema)
	if err != nil {
		t.Fatalf("SaveSnippet: %v", err)
	}
	if diff := cmp.Diff([]string{"fx"}, sn.Connectors); diff != "" {
		t.Errorf("snippet connectors (-want +got):\n%s", diff)
	}
	list, err := e.rt.Snippets(e.ctx)
	if err != nil || len(list) != 1 || list[0].Name != "addTwo" || list[0].FromExecution != src.ExecutionID {
		t.Fatalf("Snippets = %+v, %v", list, err)
	}

	o := e.run(`async () => {
		const v = await codemode.run("addTwo", { a: 40 });
		await kv.add({ key: "after", value: String(v) });
		return v;
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[float64](t, o); got != 42 {
		t.Errorf("snippet result = %v, want 42", got)
	}
	// The snippet's call continues the run's log.
	if diff := cmp.Diff([]string{"1 fx.get_sum applied", "2 kv.add applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}

	res, err := runtime.Search(e.ctx, e.rt, "add two")
	if err != nil {
		t.Fatal(err)
	}
	var found struct {
		Results []struct {
			Path, Kind string
		}
	}
	if err := json.Unmarshal(res, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Results) == 0 || found.Results[0].Path != "snippets.addTwo" || found.Results[0].Kind != "snippet" {
		t.Errorf("search \"add two\" = %s, want snippets.addTwo first", res)
	}

	d, err := runtime.Describe(e.ctx, e.rt, "snippets.addTwo")
	if err != nil {
		t.Fatal(err)
	}
	var desc map[string]any
	if err := json.Unmarshal(d, &desc); err != nil {
		t.Fatal(err)
	}
	if code, _ := desc["code"].(string); !strings.Contains(code, "fx.get_sum") {
		t.Errorf("describe snippet lacks its code: %s", d)
	}
	if desc["kind"] != "snippet" || desc["description"] != "Adds two to a number." ||
		!strings.Contains(desc["types"].(string), `declare function run(name: "addTwo", input: `) {
		t.Errorf("describe snippet = %s", d)
	}

	if err := e.rt.DeleteSnippet(e.ctx, "addTwo"); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.DeleteSnippet(e.ctx, "addTwo"); !errors.Is(err, codemode.ErrUnknownSnippet) || err.Error() != `unknown snippet "addTwo"` {
		t.Errorf("second delete: err = %v, want ErrUnknownSnippet; the engine names no surface's tool or command", err)
	}
	gone := e.run(`async () => codemode.run("addTwo", {})`, nil)
	mustStatus(t, gone, codemode.StatusError)
	if !strings.Contains(gone.Error, `unknown snippet "addTwo"`) {
		t.Errorf("running a deleted snippet: %q", gone.Error)
	}
	long := e.run(`async () => codemode.run("addTwo" + "o".repeat(1 << 20), {})`, nil)
	if !strings.Contains(long.Error, `unknown snippet "addTwo`+strings.Repeat("o", 58)+`…"`) || len(long.Error) > 1000 {
		t.Errorf("running an unknown snippet of a long name: %.200q (%d bytes)", long.Error, len(long.Error))
	}
}

// A program that runs an unknown snippet is told the nearest saved
// names, read without the snippets' code: 20 lookups among 10 snippets of
// 512 kB programs (100 MB, read whole each time) allocate far less.
func TestUnknownSnippetsReadNoCode(t *testing.T) {
	e := newEnv(t, setup{})
	const snippets, size, lookups = 10, 512 << 10, 20
	src := e.run(`async () => 1 // `+strings.Repeat("p", size), nil)
	mustStatus(t, src, codemode.StatusCompleted)
	for i := range snippets {
		if _, err := e.rt.SaveSnippet(e.ctx, fmt.Sprint("big", i), src.ExecutionID, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	o := e.run(fmt.Sprintf(`async () => {
		let last;
		for (let i = 0; i < %d; i++) {
			try { await codemode.run("bigg", {}) } catch (e) { last = String(e) }
		}
		return last;
	}`, lookups), nil)
	goruntime.ReadMemStats(&m1)
	mustStatus(t, o, codemode.StatusCompleted)
	if !strings.Contains(string(o.Result), `unknown snippet \"bigg\"; saved snippets: big`) {
		t.Errorf("running an unknown snippet: %s; want the nearest saved names", o.Result)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > snippets*size/2 {
		t.Errorf("%d lookups of an unknown snippet among %d snippets of %d-byte programs allocated %d bytes, want at most %d", lookups, snippets, size, n, snippets*size/2)
	}
}

// A search reads the saved snippets' code only when they changed since
// the last search made its index: 200 snippets of 64 kB programs (12.5 MB)
// make a search after the first allocate far less than that. A snippet
// saved again, or deleted, is searched as it now is.
func TestSearchReadsSnippetCodeOnlyWhenTheyChange(t *testing.T) {
	e := newEnv(t, setup{})
	const snippets, size = 200, 64 << 10
	src := e.run(`async () => 1 // `+strings.Repeat("p", size), nil)
	mustStatus(t, src, codemode.StatusCompleted)
	for i := range snippets {
		if _, err := e.rt.SaveSnippet(e.ctx, fmt.Sprint("big", i), src.ExecutionID, "Makes the weekly report.", nil); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q string) string {
		t.Helper()
		raw, err := runtime.Search(e.ctx, e.rt, q)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	// One the store cannot read (left out of the list, not of the stamps)
	// does not make each search read them all again.
	db, err := sql.Open("sqlite", e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(e.ctx, `UPDATE snippets SET connectors = '["cut' WHERE name = 'big9'`); err != nil {
		t.Fatal(err)
	}
	search("report")
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	got := search("report")
	goruntime.ReadMemStats(&m1)
	if !strings.Contains(got, `"snippets.big0"`) {
		t.Errorf("search(report) = %.300s; want the snippets", got)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > snippets*size/10 {
		t.Errorf("a search among %d snippets of %d-byte programs allocated %d bytes, want at most %d", snippets, size, n, snippets*size/10)
	}
	if _, err := e.rt.SaveSnippet(e.ctx, "big0", src.ExecutionID, "Sends the invoices.", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.DeleteSnippet(e.ctx, "big1"); err != nil {
		t.Fatal(err)
	}
	if got := search("invoices"); !strings.Contains(got, `"snippets.big0"`) {
		t.Errorf("search(invoices) after big0 was saved again so described = %.300s; want big0", got)
	}
	if got := search("report"); strings.Contains(got, `"snippets.big0"`) || strings.Contains(got, `"snippets.big1"`) {
		t.Errorf("search(report) = %.300s; want neither big0 (described anew) nor big1 (deleted)", got)
	}
}

func TestSaveSnippetRefusals(t *testing.T) {
	e := newEnv(t, setup{})
	done := e.run(`async () => 1`, nil)
	paused := e.run(`async () => kv.put({ key: "k", value: "v" })`, nil)
	tests := []struct {
		name, snippet, id string
		schema, desc      string
		is                error
		want              string
	}{
		{"paused run", "ok", paused.ExecutionID, "", "", codemode.ErrWrongState, "is paused; only a completed execution can be saved"},
		{"unknown run", "ok", "exec_nope", "", "", codemode.ErrUnknownExecution, "exec_nope"},
		{"bad name", "1st", done.ExecutionID, "", "", nil, "invalid snippet name"},
		{"bad name space", "a b", done.ExecutionID, "", "", nil, "invalid snippet name"},
		{"bad schema", "ok", done.ExecutionID, `{"type": 12}`, "", nil, "not a valid JSON Schema"},
		{"long name", strings.Repeat("n", 65), done.ExecutionID, "", "", nil, `invalid snippet name "` + strings.Repeat("n", 64) + `…": 65 bytes; at most 64`},
		{"long description", "ok", done.ExecutionID, "", strings.Repeat("d", 4<<10+1), nil, "snippet ok: description is 4097 bytes; at most 4096"},
		{"big schema", "ok", done.ExecutionID, `{"description": "` + strings.Repeat("s", 64<<10) + `"}`, "", nil, "snippet ok: input schema is 65555 bytes; at most 65536"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var schema json.RawMessage
			if tc.schema != "" {
				schema = json.RawMessage(tc.schema)
			}
			_, err := e.rt.SaveSnippet(e.ctx, tc.snippet, tc.id, tc.desc, schema)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
		})
	}
}

// A snippet whose connector is gone cannot run, and says which.
func TestSnippetWithMissingConnector(t *testing.T) {
	s := setup{}
	e := newEnv(t, s)
	src := e.run(`async () => kv.add({ key: "x" })`, nil)
	if _, err := e.rt.SaveSnippet(e.ctx, "usesKV", src.ExecutionID, "", nil); err != nil {
		t.Fatal(err)
	}
	e.restart(setup{noKV: true, notes: true})
	o := e.run(`async () => codemode.run("usesKV", {})`, nil)
	mustStatus(t, o, codemode.StatusError)
	if !strings.Contains(o.Error, "snippet usesKV uses connectors that are not available: kv") {
		t.Errorf("error = %q", o.Error)
	}
}

// codemode.run checks its input against the snippet's input schema before
// the snippet runs: every violation is named with its JSON pointer, and a
// refused run logs no call.
func TestSnippetInputIsValidated(t *testing.T) {
	e := newEnv(t, setup{})
	src := e.run(`async (input) => await kv.add({ key: "n", value: String((input?.n ?? 1) * 2) })`, nil)
	mustStatus(t, src, codemode.StatusCompleted)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"},"tag":{"type":"string","pattern":"^(?!x)"}},"required":["n"],"additionalProperties":false}`)
	if _, err := e.rt.SaveSnippet(e.ctx, "double", src.ExecutionID, "", schema); err != nil {
		t.Fatalf("SaveSnippet: %v", err)
	}

	tests := []struct {
		name, input string
		want        []string // in the error message
	}{
		{"wrong type and extra", `{ n: "two", extra: 1 }`, []string{"invalid input for snippet double", "at /n:", "number", "extra"}},
		{"missing", `{}`, []string{"invalid input for snippet double", "missing", "n"}},
		{"no input", ``, []string{"invalid input for snippet double", "at (root):", "null"}},
		{"ECMA pattern", `{ n: 1, tag: "xy" }`, []string{"at /tag:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := ""
			if tc.input != "" {
				args = ", " + tc.input
			}
			o := e.run(`async () => await codemode.run("double"`+args+`)`, nil)
			mustStatus(t, o, codemode.StatusError)
			for _, w := range tc.want {
				if !strings.Contains(o.Error, w) {
					t.Errorf("error %q lacks %q", o.Error, w)
				}
			}
			if got := e.log(o.ExecutionID); len(got) != 0 {
				t.Errorf("a refused snippet logged %v", got)
			}
		})
	}
	o := e.run(`async () => await codemode.run("double", { n: 21, tag: "ok" })`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
}

// A name no snippet can have (too long, or not a snippet name) is refused
// by codemode.run and codemode.describe before the store is asked: a
// program's string of any length never reaches a query, and the error
// quotes it clipped.
func TestRunSnippetOfImpossibleNameAsksNoStore(t *testing.T) {
	ls := &askedStore{}
	e := newEnv(t, setup{wrap: ls.wrap})
	src := e.run(`async () => 1`, nil)
	if _, err := e.rt.SaveSnippet(e.ctx, "addTwo", src.ExecutionID, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ expr, want string }{
		{`"addTwo" + "o".repeat(1 << 20)`, `unknown snippet "addTwo` + strings.Repeat("o", 58) + `…"; saved snippets: addTwo`},
		{`"add two"`, `unknown snippet "add two"; saved snippets: addTwo`},
	} {
		o := e.run(`async () => codemode.run(`+tc.expr+`, {})`, nil)
		mustStatus(t, o, codemode.StatusError)
		if !strings.Contains(o.Error, tc.want) || len(o.Error) > 1000 {
			t.Errorf("codemode.run(%s): error %.300q (%d bytes), want it to contain %q", tc.expr, o.Error, len(o.Error), tc.want)
		}
	}
	if _, err := runtime.Describe(e.ctx, e.rt, "snippets.addTwo"+strings.Repeat("o", 1<<20)); err == nil || len(err.Error()) > 1000 {
		t.Errorf("describe of a long snippet path: err = %.200q (%d bytes), want an error about the unknown path", err, len(err.Error()))
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, n := range ls.snippets {
		if len(n) > 64 || n == "add two" {
			t.Errorf("the store was asked for snippet %.80q (%d bytes)", n, len(n))
		}
	}
}

// A snippet that runs itself ends at the bound on snippet runs per pass,
// with an error saying so, rather than at the pass's timeout.
func TestSnippetRunningItselfIsBounded(t *testing.T) {
	e := newEnv(t, setup{})
	src := e.run(`async (input) => input?.go ? codemode.run("loop", input) : 1`, nil)
	if _, err := e.rt.SaveSnippet(e.ctx, "loop", src.ExecutionID, "", nil); err != nil {
		t.Fatal(err)
	}
	o := e.run(`async () => codemode.run("loop", { go: true })`, nil)
	mustStatus(t, o, codemode.StatusError)
	if want := "codemode.run: a run may run at most 1000 snippets per pass"; !strings.Contains(o.Error, want) {
		t.Errorf("error = %.300q, want it to contain %q", o.Error, want)
	}
	// Many runs of a snippet, each to its end, are fine within the bound.
	o = e.run(`async () => { let n = 0; for (let i = 0; i < 1000; i++) n += await codemode.run("loop"); return n }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
}
