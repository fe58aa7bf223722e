package console

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// page is what every template gets.
type page struct {
	Title   string
	Nav     string // the section: "pending", "runs" or "snippets"
	CSRF    string
	Logout  bool   // a token is configured: offer to log out
	Version string // changes when runs change (see version)
	Problem string // shown at the top (hidden characters marked): why a request was refused
	Next    string // the login form's destination
	// Issuer, when the console signs people in through one, names it on
	// the sign-in page.
	Issuer string
	// Who names the person signed in through the issuer.
	Who []visible.Segment
	// Refresh, when set, sends the browser on ("0; url=/path").
	Refresh string
	// Decided is a brief outcome of a decision about another's run.
	Decided *briefView
	// More counts the paused runs the pending actions leave out
	// (maxPendingRuns).
	More int

	Runs     []*runView
	Run      *runView
	Outcome  *outcomeView
	Snippets []snippetView
	Statuses []string
	Filter   string
	SignIn   *signInView
}

// signInView is where a person goes to sign in to a connector a run
// awaits.
type signInView struct {
	Run, Connector string
	URL            template.URL // an http(s) URL, checked (signIn)
	Until          time.Time    // when the engine stops waiting for it
}

// briefView is what an approver is told of a decision about another's
// run: the run's new status, never its result, error or log.
type briefView struct {
	Verb, ID, Status string
}

// card is a run with the session's CSRF token, for the forms of the
// shared templates.
type card struct {
	Run  *runView
	CSRF string
}

// parsePages parses every page with the layout and the shared parts.
func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ints": func(xs []int) string {
			s := make([]string, len(xs))
			for i, x := range xs {
				s[i] = strconv.Itoa(x)
			}
			return strings.Join(s, ", ")
		},
		"card": func(r *runView, csrf string) card { return card{Run: r, CSRF: csrf} },
		// visible lays out a text that may quote what others wrote (a
		// refusal's reason) for "segs".
		"visible": visible.Segments,
	}
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/parts.html"))
	pages := map[string]*template.Template{}
	for _, name := range []string{"pending", "runs", "run", "snippets", "login", "problem", "signin", "signedin"} {
		pages[name] = template.Must(template.Must(base.Clone()).ParseFS(assets, "templates/"+name+".html"))
	}
	return pages
}

// render writes a page; a template failure (a bug) is logged and answered
// with a plain 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	if s := sessionOf(r); s != nil {
		p.CSRF, p.Logout = s.csrf, c.auth.hasToken || c.signOn != nil // (a token or a sign-on: one can log out)
		if p.Version == "" {
			p.Version, _ = c.fingerprint(r.Context())
		}
	}
	if who := codemode.PrincipalFrom(r.Context()); who != nil && p.Who == nil {
		p.Who = visible.Segments(who.Display())
	}
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		c.log.Error("console: rendering a page failed", "page", name, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refuse answers with a page that says why the request went no further.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "problem", &page{Title: http.StatusText(status), Problem: msg})
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, status int, next, problem string) {
	p := &page{Title: "Log in", Next: localPath(next), Problem: problem}
	if c.signOn != nil {
		p.Title, p.Issuer = "Sign in", c.issuer
	}
	c.render(w, r, status, "login", p)
}

// failed reports a failure while doing what: a run the engine does not
// know (deleted, pruned, or not the person's to see) as 404, naming the
// run of the request's path; anything else in detail in the log and
// briefly on the page.
func (c *Console) failed(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, codemode.ErrUnknownExecution) {
		c.refuse(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %s (it may have been deleted or pruned).", short.Quote(r.PathValue("id"))))
		return
	}
	c.log.Error("console: "+what, "err", err)
	c.refuse(w, r, http.StatusInternalServerError, "Internal error while "+what+" (details in the server log).")
}

// readRun reads run id and lays it out (newRunView): every entry without
// its values, the pending actions whole (a decision carries their
// digest), and page n of its calls (from 1; 0: none; none past the last),
// calls.Limit a page, values cut to calls.Preview; with calls.NoOutput,
// without the run's result and console output (a page of runs shows
// neither). A run with a long log is never read whole: what a page shows
// is bounded by its number of calls and the preview.
func (c *Console) readRun(ctx context.Context, id string, n int, calls codemode.LogQuery) (*runView, error) {
	e, heads, err := c.eng.ExecutionLog(ctx, id, codemode.LogQuery{Preview: -1, NoOutput: calls.NoOutput})
	if err != nil {
		return nil, err
	}
	var pending []codemode.PendingAction
	if e.Status == codemode.StatusPaused {
		var whole []codemode.Entry
		for _, h := range heads {
			if !h.State.AwaitsPerson() {
				continue
			}
			_, one, err := c.eng.ExecutionLog(ctx, id, codemode.LogQuery{After: h.Seq - 1, Limit: 1, NoOutput: true})
			if err != nil {
				return nil, err
			}
			for _, en := range one {
				whole = append(whole, en.Entry)
			}
		}
		pending = codemode.PendingActions(id, whole)
	}
	var page []codemode.ClippedEntry
	if from := (n - 1) * calls.Limit; n > 0 && n-1 <= len(heads)/calls.Limit && (from == 0 || from < len(heads)) { // (n checked before from overflows)
		if from > 0 { // page n holds calls from+1 on, read by seq from the heads
			calls.After = heads[from-1].Seq
		}
		calls.NoOutput = true // (the run is read above)
		if _, page, err = c.eng.ExecutionLog(ctx, id, calls); err != nil {
			return nil, err
		}
	}
	return c.newRunView(e, heads, pending, page, calls.Preview), nil
}

// runViews reads and lays out each run of list (n, calls: as readRun),
// leaving out those deleted meanwhile.
func (c *Console) runViews(ctx context.Context, list []*codemode.Execution, n int, calls codemode.LogQuery) ([]*runView, error) {
	var out []*runView
	for _, e := range list {
		v, err := c.readRun(ctx, e.ID, n, calls)
		switch {
		case errors.Is(err, codemode.ErrUnknownExecution):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// pendingPage lists the paused runs, oldest first (a new pause is added
// below the others: it never moves what is under the pointer), with their
// pending actions and the buttons to decide; at most maxPendingRuns of
// them, saying how many more wait.
//
// A person signed in through the issuer sees their own paused runs (with
// codemode:run) and, as an approver (codemode:approve), the actions of
// others' runs the policy shows them, each with its run's id and starter:
// never another's program, log or result.
func (c *Console) pendingPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	who := codemode.PrincipalFrom(ctx)
	p := &page{Title: "Awaiting approval", Nav: "pending"}
	if s := sessionOf(r); s != nil {
		if f := c.auth.takeFlash(s, ""); f != nil {
			p.Decided = &briefView{Verb: f.verb, ID: f.outcome.ExecutionID, Status: f.outcome.Status.String()}
		}
	}
	var paused []*codemode.Execution
	if who == nil || who.HasScope(codemode.ScopeRun) {
		var err error
		// Brief: only the ids are needed (readRun reads each shown run),
		// and most of them may not be shown at all (maxPendingRuns).
		if paused, err = c.eng.Executions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused, Brief: true}); err != nil {
			c.failed(w, r, "listing the paused runs", err)
			return
		}
	}
	slices.Reverse(paused) // listed newest first
	p.More = max(len(paused)-maxPendingRuns, 0)
	runs, err := c.runViews(ctx, paused[:len(paused)-p.More], 0, codemode.LogQuery{Preview: previewChars, NoOutput: true})
	if err != nil {
		c.failed(w, r, "reading a run", err)
		return
	}
	p.Runs = slices.DeleteFunc(runs, func(v *runView) bool { return !v.Paused }) // (decided meanwhile)
	if who != nil && who.HasScope(codemode.ScopeApprove) {
		others, err := c.othersPending(ctx, who)
		if err != nil {
			c.failed(w, r, "listing the pending actions", err)
			return
		}
		room := max(maxPendingRuns-len(p.Runs), 0)
		p.More += max(len(others)-room, 0)
		p.Runs = append(p.Runs, others[:min(len(others), room)]...)
	}
	c.render(w, r, http.StatusOK, "pending", p)
}

// othersPending lays out the pending actions of others' runs that who is
// shown as an approver, one card a run, oldest run first.
func (c *Console) othersPending(ctx context.Context, who *codemode.Principal) ([]*runView, error) {
	all, err := c.eng.Pending(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []*runView
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].ExecutionID == all[i].ExecutionID {
			j++
		}
		if run := all[i:j]; run[0].StartedBy.Subject != who.Subject {
			out = append(out, c.approvalView(run))
		}
		i = j
	}
	return out, nil
}

// Bounds of the runs page.
const (
	defaultRuns = 50
	maxRuns     = 500
)

// maxPendingRuns bounds the paused runs the pending actions show (the
// oldest; the page says how many more wait).
const maxPendingRuns = 50

// runsPage is the audit trail: runs newest first (filtered by status),
// each with its first calls.
func (c *Console) runsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	p := &page{Title: "Runs", Nav: "runs", Filter: q.Get("status")}
	for _, st := range codemode.ExecStatuses() {
		p.Statuses = append(p.Statuses, st.String())
	}
	n, ok := positive(q.Get("limit"))
	if !ok || n > maxRuns {
		c.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("limit %s: want a number from 1 to %d", short.Quote(q.Get("limit")), maxRuns))
		return
	}
	f := codemode.ExecutionFilter{Limit: cmp.Or(n, defaultRuns), Brief: true} // (readRun reads each)
	if p.Filter != "" {
		st, err := codemode.ParseExecStatus(p.Filter)
		if err != nil {
			c.refuse(w, r, http.StatusBadRequest, err.Error())
			return
		}
		f.Status = st
	}
	list, err := c.eng.Executions(ctx, f)
	if err != nil {
		c.failed(w, r, "listing runs", err)
		return
	}
	if p.Runs, err = c.runViews(ctx, list, 1, codemode.LogQuery{Limit: listCalls, Preview: listPreviewChars, NoOutput: true}); err != nil {
		c.failed(w, r, "reading a run", err)
		return
	}
	c.render(w, r, http.StatusOK, "runs", p)
}

// showRun shows one run: its program, calls (a page of them: ?page=N),
// outcome, and the decisions it allows; after a decision, that decision's
// outcome. A refused decision shows it with status and the problem.
func (c *Console) showRun(w http.ResponseWriter, r *http.Request, id string, status int, problem string) {
	n := 1
	if s := r.URL.Query().Get("page"); s != "" && r.Method == http.MethodGet {
		var ok bool
		if n, ok = positive(s); !ok {
			c.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("page %s: want a page number from 1", short.Quote(s)))
			return
		}
	}
	v, err := c.readRun(r.Context(), id, n, codemode.LogQuery{Limit: callsPerPage, Preview: previewChars})
	if err != nil {
		c.failed(w, r, "reading a run", err)
		return
	}
	if pages := (v.CallCount + callsPerPage - 1) / callsPerPage; n > max(pages, 1) { // (n*callsPerPage may overflow)
		c.refuse(w, r, http.StatusNotFound, fmt.Sprintf("Run %s has %s: there is no page %d of them.", id, plural(v.CallCount, "call", "calls"), n))
		return
	}
	from := (n - 1) * callsPerPage
	if v.CallCount > callsPerPage {
		pg := &pagerView{From: from + 1, To: min(from+callsPerPage, v.CallCount), Total: v.CallCount}
		base := "/runs/" + url.PathEscape(id) + "?page="
		if n > 1 {
			pg.Prev = base + strconv.Itoa(n-1)
		}
		if pg.To < pg.Total {
			pg.Next = base + strconv.Itoa(n+1)
		}
		v.Pager = pg
	}
	p := &page{Title: "Run " + id, Nav: "runs", Run: v, Problem: problem}
	if s := sessionOf(r); s != nil && problem == "" {
		if f := c.auth.takeFlash(s, id); f != nil {
			p.Outcome = newOutcomeView(f)
		}
	}
	c.render(w, r, status, "run", p)
}

// valuePage downloads one value of a run whole, as it is logged: part
// ("args", "result" or "error") of call seq, or with no seq the run's
// ("result", "error", "code": its program, or "logs": its console
// output). It is how a value the pages show cut is read in full (a value
// is at most what the log keeps of one, 1 MiB by default).
func (c *Console) valuePage(w http.ResponseWriter, r *http.Request) {
	id, q := r.PathValue("id"), r.URL.Query()
	part := q.Get("part")
	seq, ok := positive(q.Get("seq"))
	if !ok {
		c.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("seq %s is not a call number", short.Quote(q.Get("seq"))))
		return
	}
	if !(seq == 0 && (part == "result" || part == "error" || part == "code" || part == "logs") || seq > 0 && (part == "args" || part == "result" || part == "error")) {
		c.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("part %s: want args, result or error of a call (seq=N), or result, error, code or logs of the run", short.Quote(part)))
		return
	}
	body, name, err := c.value(r.Context(), id, seq, part)
	switch {
	case err != nil:
		c.failed(w, r, "reading a run", err)
		return
	case body == nil:
		c.refuse(w, r, http.StatusNotFound, fmt.Sprintf("Run %s has no such value (%s of call %d).", id, part, seq))
		return
	}
	if part == "args" || part == "result" {
		download(w, body, name+".json", "application/json")
	} else {
		download(w, body, name+".txt", "text/plain; charset=utf-8")
	}
}

// download answers with body, of type ctype, as a file named name.
func download(w http.ResponseWriter, body []byte, name, ctype string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+unsafeInFileName.ReplaceAllString(name, "_")+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// value reads one value of run id whole (see valuePage) and names it for
// a file; nil when the run has no such value.
func (c *Console) value(ctx context.Context, id string, seq int, part string) ([]byte, string, error) {
	if seq == 0 {
		e, _, err := c.eng.ExecutionLog(ctx, id, codemode.LogQuery{Limit: 1, Preview: -1})
		if err != nil {
			return nil, "", err
		}
		v := map[string][]byte{"error": []byte(e.Error), "code": []byte(e.Code), "logs": []byte(strings.Join(e.Logs, "\n"))}[part]
		if part == "result" && e.Status == codemode.StatusCompleted {
			v = rawOrNull(e.Result)
		}
		if len(v) == 0 {
			return nil, "", nil
		}
		return v, e.ID + "-" + part, nil
	}
	e, log, err := c.eng.ExecutionLog(ctx, id, codemode.LogQuery{After: seq - 1, Limit: 1, NoOutput: true})
	if err != nil || len(log) == 0 || log[0].Seq != seq {
		return nil, "", err
	}
	v := map[string][]byte{"args": log[0].Args, "result": log[0].Result, "error": []byte(log[0].Error)}[part]
	if len(v) == 0 {
		return nil, "", nil
	}
	return v, fmt.Sprintf("%s-call-%d-%s", e.ID, seq, part), nil
}

// positive reads a number from 1 in a query or form field (0: the field
// is empty), and reports whether the field holds one.
func positive(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1
}

// rawOrNull is a result as logged, "null" for none.
func rawOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// unsafeInFileName are the characters of a download's name that are not
// safe in a file name (ids are "exec_" and hex digits; an id from an
// older store could be anything).
var unsafeInFileName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func (c *Console) snippetsPage(w http.ResponseWriter, r *http.Request) {
	list, err := c.eng.Snippets(r.Context())
	if err != nil {
		c.failed(w, r, "listing snippets", err)
		return
	}
	p := &page{Title: "Snippets", Nav: "snippets"}
	for _, s := range list {
		code := s.Code[:cutAt(s.Code, textChars, true)]
		p.Snippets = append(p.Snippets, snippetView{
			Name:          visible.Segments(s.Name),
			Description:   visible.Segments(s.Description),
			Code:          codeView(code, nil),
			CodeCut:       cutNote(code, len(s.Code), "/snippets/"+url.PathEscape(s.Name)+"/code"),
			InputSchema:   jsonView("snippet-"+s.Name+"-schema", s.InputSchema),
			Connectors:    strings.Join(s.Connectors, ", "),
			FromExecution: s.FromExecution,
			Age:           age(c.auth.now(), s.CreatedAt),
			Created:       s.CreatedAt,
		})
	}
	c.render(w, r, http.StatusOK, "snippets", p)
}

// snippetCode downloads a snippet's code whole.
func (c *Console) snippetCode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s, err := c.eng.Snippet(r.Context(), name)
	switch {
	case errors.Is(err, codemode.ErrUnknownSnippet):
		c.refuse(w, r, http.StatusNotFound, fmt.Sprintf("There is no snippet %s (it may have been deleted).", short.Quote(name)))
		return
	case err != nil:
		c.failed(w, r, "reading a snippet", err)
		return
	}
	download(w, []byte(s.Code), name+".js", "text/plain; charset=utf-8")
}

// review decides about a paused run's pending actions as the form showed
// them (its digest): approves them, or with reject rejects the run (or
// one of its actions, with seq) with the reason typed.
func (c *Console) review(reject bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rv := codemode.Review{Digest: r.PostForm.Get("digest"), Reason: r.PostForm.Get("reason")}
		seq, ok := positive(r.PostForm.Get("seq"))
		switch {
		case rv.Digest == "":
			c.refuse(w, r, http.StatusBadRequest, "The form does not say which pending actions it decides (no digest). Reload the page and try again.")
		case !ok:
			c.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("seq %s is not a call number", short.Quote(r.PostForm.Get("seq"))))
		case reject:
			c.decide(w, r, "rejected", func(ctx context.Context, id string) (codemode.Outcome, error) {
				return c.eng.RejectReviewed(ctx, id, seq, rv)
			})
		default:
			c.decide(w, r, "approved", func(ctx context.Context, id string) (codemode.Outcome, error) {
				return c.eng.Resume(ctx, id, rv)
			})
		}
	}
}

// decide makes a decision through the engine, detached from the request
// (a closed tab does not cut a run short), and sends the browser to the
// run's page, which shows the outcome once. A refused decision shows the
// run as it is now, with the reason, and status 409.
//
// A decision about another's run (its form says from=pending: an
// approver's card) sends the browser back to the pending actions, told
// only the run's new status, and a refusal is shown there: the run's own
// page is its starter's.
func (c *Console) decide(w http.ResponseWriter, r *http.Request, verb string, do func(context.Context, string) (codemode.Outcome, error)) {
	id := r.PathValue("id")
	brief := r.PostForm.Get("from") == "pending" && codemode.PrincipalFrom(r.Context()) != nil
	o, err := do(context.WithoutCancel(r.Context()), id)
	switch {
	case codemode.IsRefusal(err) && !errors.Is(err, codemode.ErrUnknownExecution):
		c.log.Info("console: decision refused", "verb", verb, "executionId", id, "reason", err)
		if brief {
			c.refuse(w, r, http.StatusConflict, err.Error())
		} else {
			c.showRun(w, r, id, http.StatusConflict, err.Error())
		}
		return
	case err != nil:
		c.failed(w, r, "the run was being "+verb, err)
		return
	}
	c.log.Info("console: "+verb, "executionId", id, "status", o.Status.String())
	f, to := &flash{verb: verb, outcome: o}, "/runs/"+url.PathEscape(id)
	if brief {
		f, to = &flash{verb: verb, outcome: codemode.Outcome{ExecutionID: id, Status: o.Status}, brief: true}, "/"
	}
	c.auth.setFlash(sessionOf(r), f)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// signIn starts (or finds under way) the sign-in to a connector the run
// awaits and shows the person the link to its page. The console does not
// redirect there itself: its pages may only submit forms to their own
// origin (form-action 'self'), and a link is what the person should see
// anyway: where they are sent.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	id, connector := r.PathValue("id"), r.PostForm.Get("connector")
	ctx := r.Context()
	v, err := c.readRun(ctx, id, 0, codemode.LogQuery{})
	if err != nil {
		c.failed(w, r, "loading the run", err)
		return
	}
	if !slices.Contains(v.SignIns, connector) { // (none unless it is paused)
		c.showRun(w, r, id, http.StatusConflict, fmt.Sprintf("Run %s does not await a sign-in to %s (any more).", id, short.Quote(connector)))
		return
	}
	link, until, err := c.eng.SignInPage(context.WithoutCancel(ctx), connector)
	if err != nil {
		c.failed(w, r, "starting the sign-in to "+connector, err)
		return
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		c.failed(w, r, "starting the sign-in to "+connector, fmt.Errorf("the sign-in page is not an http(s) URL"))
		return
	}
	c.log.Info("console: sign-in started", "executionId", id, "connector", connector)
	c.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in to " + connector, Nav: "pending",
		SignIn: &signInView{Run: id, Connector: connector, URL: template.URL(u.String()), Until: until}})
}

// version answers the page's script: a value that changes when runs or
// snippets change, so the page refreshes itself then.
func (c *Console) version(w http.ResponseWriter, r *http.Request) {
	v, err := c.fingerprint(r.Context())
	if err != nil {
		c.log.Error("console: version", "err", err)
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"version": v})
}

// fingerprintRuns is how many of the newest runs the fingerprint covers,
// and fingerprintPaused how many of the newest paused runs besides: the
// script asks every few seconds, and reads the runs brief (no programs).
const fingerprintRuns, fingerprintPaused = 20, 1000

// fingerprint hashes the state of the newest runs, the newest paused runs
// and the snippets (their names and when each was saved, not their code).
func (c *Console) fingerprint(ctx context.Context) (string, error) {
	recent, err := c.eng.Executions(ctx, codemode.ExecutionFilter{Limit: fingerprintRuns, Brief: true})
	if err != nil {
		return "", err
	}
	paused, err := c.eng.Executions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused, Limit: fingerprintPaused, Brief: true})
	if err != nil {
		return "", err
	}
	snippets, err := c.eng.SnippetStamps(ctx)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range append(recent, paused...) {
		fmt.Fprintf(h, "%s %s %d\n", e.ID, e.Status, e.UpdatedAt.UnixNano())
	}
	if who := codemode.PrincipalFrom(ctx); who.HasScope(codemode.ScopeApprove) {
		// An approver's page shows others' pending actions too.
		pending, err := c.eng.Pending(ctx, "")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "pending %s\n", codemode.PendingDigest(pending))
	}
	for _, s := range snippets {
		fmt.Fprintf(h, "snippet %q %d\n", s.Name, s.CreatedAt.UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}
