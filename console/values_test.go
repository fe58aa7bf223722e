package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/console"
)

// run executes a program to its end and returns its execution id.
func (e *env) run(code string, want codemode.ExecStatus) string {
	e.t.Helper()
	o, err := e.rt.Execute(e.ctx, code, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if o.Status != want {
		e.t.Fatalf("status %s, want %s: %+v", o.Status, want, o)
	}
	return o.ExecutionID
}

var hrefRe = regexp.MustCompile(`<a href="(/runs/[^"]+/value\?[^"]+)" download>`)

// A value too long to show is shown cut, with its size and a link that
// downloads it whole: on a run's page (8,000 characters), in the list of
// runs (1,000), and in a pending action, whose whole arguments an Approve
// still approves.
func TestLongValuesAreShownCutAndDownloadWhole(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	big := strings.Repeat("0123456789", 2000) + "END" // 20,003 characters
	id := e.run(`async () => { await codemode.step("big", () => "0123456789".repeat(2000) + "E" + "ND"); return "ok" }`, codemode.StatusCompleted)

	for _, tt := range []struct {
		path, shown string
	}{
		{"/runs/" + id, "8000 characters"},
		{"/runs", "1000 characters"},
	} {
		p := b.get(tt.path)
		if want := "Cut: the first " + tt.shown + " of 19.5 KiB are shown."; !strings.Contains(p.body, want) {
			t.Errorf("%s: no %q", tt.path, want)
		}
		if strings.Contains(p.body, "END") {
			t.Errorf("%s shows the whole value", tt.path)
		}
		m := hrefRe.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("%s: no download link", tt.path)
		}
		d := b.get(html.UnescapeString(m[1]))
		if d.status != http.StatusOK || d.body != jsString(big) {
			t.Errorf("%s: the download gives %d, %d bytes; want the value whole (%d bytes)", tt.path, d.status, len(d.body), len(jsString(big)))
		}
		if cd := d.header.Get("Content-Disposition"); cd != `attachment; filename="`+id+`-call-1-result.json"` || d.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: download headers %q, %q", tt.path, cd, d.header.Get("Content-Type"))
		}
	}

	// A pending action's long arguments: cut on the page, approved whole.
	pid := e.pause(big)
	p := b.get("/")
	if !strings.Contains(p.body, "Cut: the first 8000 characters of 19.5 KiB are shown.") {
		t.Errorf("pending arguments are not shown cut")
	}
	m := hrefRe.FindStringSubmatch(p.body)
	if m == nil || !strings.Contains(m[1], "part=args") {
		t.Fatalf("no download link for the pending arguments: %v", m)
	}
	if d := b.get(html.UnescapeString(m[1])); !strings.Contains(d.body, "END") {
		t.Errorf("the pending arguments do not download whole: %d bytes", len(d.body))
	}
	csrf, digest := form(t, p, pid)
	if r := b.do("POST", "/runs/"+pid+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); r.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", r.status)
	}
	if st := e.status(pid); st != codemode.StatusCompleted {
		t.Errorf("approved run is %s", st)
	}

	// What the download refuses.
	for path, want := range map[string]int{
		"/runs/" + id + "/value?part=args&seq=1":   http.StatusNotFound, // a step has no arguments
		"/runs/" + id + "/value?part=result&seq=9": http.StatusNotFound,
		"/runs/" + id + "/value?part=program":      http.StatusBadRequest,
		"/runs/" + id + "/value?part=code&seq=1":   http.StatusBadRequest, // a call has no program
		"/runs/" + id + "/value?part=args":         http.StatusBadRequest,
		"/runs/" + id + "/value?part=result&seq=x": http.StatusBadRequest,
		"/runs/exec_none/value?part=result":        http.StatusNotFound,
		"/runs/" + id + "/value?part=result":       http.StatusOK, // the run's result
	} {
		if got := b.get(path); got.status != want {
			t.Errorf("GET %s: %d, want %d", path, got.status, want)
		}
	}
	if got := e.browser().get("/runs/" + id + "/value?part=result&seq=1"); got.status != http.StatusUnauthorized || strings.Contains(got.body, "0123456789") {
		t.Errorf("a download without a session: %d", got.status)
	}
}

// A run's page shows its calls a page at a time, with links to the
// others; the list of runs shows the first calls of each and counts them
// all.
func TestCallsAreShownAPageAtATime(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	id := e.run(`async () => { for (let i = 1; i <= 250; i++) await codemode.step("s" + i, () => i); return "ok" }`, codemode.StatusCompleted)
	for _, tt := range []struct {
		page          string
		first, last   int
		prev, next    string
		pagerOnTheTop string
	}{
		{"", 1, 100, "", "2", "Calls 1–100 of 250"},
		{"?page=2", 101, 200, "1", "3", "Calls 101–200 of 250"},
		{"?page=3", 201, 250, "2", "", "Calls 201–250 of 250"},
	} {
		p := b.get("/runs/" + id + tt.page)
		if !strings.Contains(p.body, tt.pagerOnTheTop) {
			t.Errorf("page %q: no %q", tt.page, tt.pagerOnTheTop)
		}
		steps := regexp.MustCompile(`step\(s(\d+)\)`).FindAllStringSubmatch(p.body, -1)
		if len(steps) != tt.last-tt.first+1 || steps[0][1] != fmt.Sprint(tt.first) || steps[len(steps)-1][1] != fmt.Sprint(tt.last) {
			t.Errorf("page %q shows %d calls, from %s to %s; want %d to %d", tt.page, len(steps), steps[0][1], steps[len(steps)-1][1], tt.first, tt.last)
		}
		for rel, n := range map[string]string{"prev": tt.prev, "next": tt.next} {
			link := fmt.Sprintf(`href="/runs/%s?page=%s" rel="%s"`, id, n, rel)
			if has := strings.Contains(p.body, link); has != (n != "") {
				t.Errorf("page %q: link %s present %v", tt.page, link, has)
			}
		}
	}
	for _, n := range []string{"4", "92233720368547759", "9223372036854775807"} { // (the last two overflow n*100)
		if p := b.get("/runs/" + id + "?page=" + n); p.status != http.StatusNotFound || !strings.Contains(p.body, "there is no page "+n) {
			t.Errorf("page %s of 250 calls: %d\n%.2000s", n, p.status, p.body)
		}
	}
	if p := b.get("/runs/" + id + "?page=0"); p.status != http.StatusBadRequest {
		t.Errorf("page 0: %d", p.status)
	}
	list := b.get("/runs")
	if !strings.Contains(list.body, "250 calls") || !strings.Contains(list.body, "The first 20 calls are shown") || strings.Contains(list.body, "step(s21)") {
		t.Errorf("the list of runs does not show the first 20 calls of 250")
	}
}

// The pending actions are listed oldest first, so a new pause is added
// below what is on the page; each Approve and Reject names the run (and
// Approve the call) it decides.
func TestPausesOldestFirstAndButtonsNameTheirRun(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	first := e.pause("first")
	second := e.pause("second")
	p := b.get("/")
	i, j := strings.Index(p.body, `id="run-`+first+`"`), strings.Index(p.body, `id="run-`+second+`"`)
	if i < 0 || j < 0 || i > j {
		t.Errorf("the older pause is not listed first (at %d and %d)", i, j)
	}
	for _, id := range []string{first, second} {
		for _, want := range []string{
			`<button type="submit" class="approve">Approve notes.createNote <span class="of">of run</span> <code class="eid">` + id + `</code></button>`,
			`<button type="submit" class="reject">Reject <span class="of">run</span> <code class="eid">` + id + `</code></button>`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("no %s", want)
			}
		}
	}
}

// A value nested deeper than a page lays out (40 levels) is shown whole,
// as its text; a shallower one is laid out, member by member.
func TestDeepValuesAreShownAsText(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	deep := e.run(`async () => { let v = "core"; for (let i = 0; i < 60; i++) v = [v]; return v; }`, codemode.StatusCompleted)
	p := b.get("/runs/" + deep)
	if p.status != http.StatusOK || !strings.Contains(p.body, strings.Repeat("[", 60)+"&#34;core&#34;"+strings.Repeat("]", 60)) {
		t.Errorf("a value 60 levels deep is not shown as its text: %d\n%s", p.status, p.body)
	}
	shallow := e.run(`async () => [["core"]]`, codemode.StatusCompleted)
	if p := b.get("/runs/" + shallow); !strings.Contains(p.body, `<span class="js">&#34;core&#34;</span>`) {
		t.Errorf("a shallow value is not laid out:\n%s", p.body)
	}
}

// A run's error is cut as a call's is (8,000 characters on its page,
// 1,000 in the list of runs), and its program and console output past
// 20,000 characters, on its page and among the pending actions, each
// with its size and a link that downloads it whole: a program's 1 MiB
// of hidden characters, or the error it throws, is not a page of tens of
// megabytes (and, in the list, as many times over as it has runs). A
// program of hidden characters is cut sooner (hiddenShown).
func TestLongProgramsErrorsAndOutputAreShownCut(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	tail := " // " + strings.Repeat("\u200b", 30000) + "CODEEND"
	failing := `async () => { console.log("L".repeat(30000) + "LOG" + "END"); throw new Error("E".repeat(30000) + "ERR" + "END") }`
	id := e.run(failing+tail, codemode.StatusError)
	pausing := `async () => { const n = await notes.createNote({ text: "x" }); return n.id }`
	paused := e.run(pausing+tail, codemode.StatusPaused)

	for _, tt := range []struct {
		path  string
		shown []string // what each cut note says is shown
	}{
		{"/runs/" + id, []string{"8000 characters of 29.3 KiB", "20,000 characters of 29.3 KiB", hiddenShown(failing+" // ") + " characters of 88 KiB"}},
		{"/runs", []string{"1000 characters of 29.3 KiB"}},
		{"/runs/" + paused, []string{hiddenShown(pausing+" // ") + " characters of 88 KiB"}},
		{"/", []string{hiddenShown(pausing+" // ") + " characters of 88 KiB"}},
	} {
		p := b.get(tt.path)
		for _, end := range []string{"LOGEND", "ERREND", "CODEEND"} {
			if strings.Contains(p.body, end) {
				t.Errorf("%s shows what comes after the cut (%s): %d bytes", tt.path, end, len(p.body))
			}
		}
		for _, shown := range tt.shown {
			if !strings.Contains(p.body, "Cut: the first "+shown+" are shown.") {
				t.Errorf("%s: no cut note for the first %s", tt.path, shown)
			}
		}
		links := hrefRe.FindAllStringSubmatch(p.body, -1)
		if len(links) != len(tt.shown) {
			t.Fatalf("%s: %d download links, want %d", tt.path, len(links), len(tt.shown))
		}
		for _, m := range links {
			d := b.get(html.UnescapeString(m[1]))
			if d.status != http.StatusOK || !strings.Contains(d.body, "END") {
				t.Errorf("%s: %s downloads %d, %d bytes, not the whole", tt.path, m[1], d.status, len(d.body))
			}
		}
	}
}

// The outcome shown once after an approval is cut as the run's page is:
// its result and error at 8,000 characters, each with a download of the
// whole, instead of repeating them whole above the run's own (cut) copy.
func TestADecisionsOutcomeIsShownCut(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	for _, end := range []string{
		`return "R".repeat(30000) + "OUT" + "END"`,
		`throw new Error("E".repeat(30000) + "OUT" + "END")`,
	} {
		id := e.run(`async () => { await notes.createNote({ text: "x" }); `+end+` }`, codemode.StatusPaused)
		csrf, digest := form(t, b.get("/runs/"+id), id)
		if p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil); p.status != http.StatusSeeOther {
			t.Fatalf("approve: %d", p.status)
		}
		p := b.get("/runs/" + id)
		if !strings.Contains(p.body, `class="outcome"`) {
			t.Fatalf("%s: the page after the approval shows no outcome", end)
		}
		if strings.Contains(p.body, "OUTEND") {
			t.Errorf("%s: the outcome is shown whole: %d bytes", end, len(p.body))
		}
		if n := strings.Count(p.body, "Cut: the first 8000 characters of "); n != 2 {
			t.Errorf("%s: %d cut notes, want 2 (the outcome's and the run's)", end, n)
		}
	}
}

// hiddenShown is how many characters a page shows of a program of plain
// characters, then hidden ones: the plain ones, then as many hidden ones
// as the HTML a program may make allows (20,000 characters of about 8
// bytes, a hidden one about 80).
func hiddenShown(plain string) string {
	n := utf8.RuneCountInString(plain)
	return strconv.Itoa(n + (20_000*8-n)/80)
}

// A snippet's code is cut as a run's program is (20,000 characters, and
// sooner when they are hidden ones), with a link that downloads it whole.
func TestLongSnippetsAreShownCut(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	code := `async () => 1 // ` + strings.Repeat("\u200b", 30000) + "CODEEND"
	id := e.run(code, codemode.StatusCompleted)
	if _, err := e.rt.SaveSnippet(e.ctx, "long", id, "", nil); err != nil {
		t.Fatal(err)
	}
	p := b.get("/snippets")
	if strings.Contains(p.body, "CODEEND") || !strings.Contains(p.body, "Cut: the first "+hiddenShown(`async () => 1 // `)+" characters of 87.9 KiB are shown.") {
		t.Fatalf("the snippet's code is not shown cut: %d bytes", len(p.body))
	}
	m := regexp.MustCompile(`<a href="(/snippets/[^"]+)" download>`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no download link")
	}
	if d := b.get(m[1]); d.status != http.StatusOK || d.body != code {
		t.Errorf("the download gives %d, %d bytes; want the code whole (%d bytes)", d.status, len(d.body), len(code))
	}
	if d := b.get("/snippets/none/code"); d.status != http.StatusNotFound {
		t.Errorf("an unknown snippet's code: %d", d.status)
	}
}

// The pending actions list at most MaxPendingRuns paused runs, the
// oldest, and say how many more wait: a client that leaves thousands of
// runs paused does not make a page of all of them (each with its program
// and arguments), which the console would read and send again whenever
// one changes.
func TestThePendingListIsBounded(t *testing.T) {
	e := newEnv(t, token)
	b := e.browser()
	b.login(token)
	var ids []string
	for i := range console.MaxPendingRuns + 2 {
		ids = append(ids, e.pause(fmt.Sprint("note ", i)))
	}
	p := b.get("/")
	if n := strings.Count(p.body, `<article class="run"`); n != console.MaxPendingRuns {
		t.Errorf("the page lists %d paused runs, want %d", n, console.MaxPendingRuns)
	}
	if !strings.Contains(p.body, `id="run-`+ids[0]+`"`) || strings.Contains(p.body, `id="run-`+ids[len(ids)-1]+`"`) {
		t.Errorf("the page does not list the oldest paused runs")
	}
	if !strings.Contains(p.body, "2 more paused runs wait") {
		t.Errorf("the page does not say how many more wait")
	}
}
