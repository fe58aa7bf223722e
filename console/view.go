package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// What the pages fold (behind a click, never left out): strings longer
// than foldChars characters, showing their first foldHead; arrays and
// objects of more than foldItems members. A value nested deeper than
// maxDepth is shown as its text.
const (
	foldChars = 240
	foldHead  = 100
	foldItems = 30
	maxDepth  = 40
)

// jsonNode is one value of a JSON document laid out for a page: a scalar,
// or an object or array with its members.
type jsonNode struct {
	ID     string // of its fold, stable across refreshes of the page
	HasKey bool
	Key    []visible.Segment // the member's name (HasKey)
	// A container has Open and Close ("{" and "}", "[" and "]") and Items;
	// a scalar has Text and Class ("s" string, "n" number, "l" literal).
	Open, Close string
	Items       []*jsonNode
	Text        []visible.Segment
	Class       string
	Comma       bool
	// Fold: the value is shown behind a <details>, with Summary and Note
	// ("1,234 characters", "57 items") in its <summary>.
	Fold    bool
	Summary []visible.Segment
	Note    string
}

// jsonView lays out a JSON value as logged (nil for none): numbers and
// keys exactly as written, in order, duplicates included (the grammar is
// internal/jsontext's). Text that is not JSON is shown as text.
func jsonView(id string, raw json.RawMessage) *jsonNode {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	n, ok := jsontext.Parse[*jsonNode](raw, maxDepth, jsonNodes{})
	if !ok {
		n = &jsonNode{Text: visible.Segments(string(raw)), Class: "s"}
	}
	n.number(id)
	return n
}

// number gives n and its members the ids of their folds: id, then each
// member's index after a dot.
func (n *jsonNode) number(id string) {
	n.ID = id
	for i, item := range n.Items {
		item.number(id + "." + strconv.Itoa(i))
	}
}

// jsonNodes builds the nodes of a page (jsontext.Builder).
type jsonNodes struct{}

// scalar is a literal ("l": true, false, null) or a number ("n") as written.
func scalar(class, text string) *jsonNode {
	return &jsonNode{Class: class, Text: []visible.Segment{{Text: text}}}
}

func (jsonNodes) Null() *jsonNode                      { return scalar("l", "null") }
func (jsonNodes) Bool(b bool) *jsonNode                { return scalar("l", strconv.FormatBool(b)) }
func (jsonNodes) Number(text []byte) (*jsonNode, bool) { return scalar("n", string(text)), true }

func (jsonNodes) String(v string) *jsonNode {
	n := &jsonNode{Class: "s", Text: quoted(v)}
	if chars := utf8.RuneCountInString(v); chars > foldChars {
		head := quoted(v[:cutAt(v, foldHead, false)])
		head[len(head)-1] = visible.Segment{Text: "…"} // for the closing quote
		n.Fold, n.Summary, n.Note = true, head, plural(chars, "character", "characters")
	}
	return n
}

func (jsonNodes) Array(items []*jsonNode) *jsonNode {
	return container("[", "]", "item", "items", items)
}

func (jsonNodes) Object(keys []string, items []*jsonNode) (*jsonNode, bool) {
	for i, k := range keys {
		items[i].HasKey, items[i].Key = true, stringSegments(k)
	}
	return container("{", "}", "member", "members", items), true
}

// container is an array or object of items, folded when it has more
// than foldItems.
func container(open, close, one, many string, items []*jsonNode) *jsonNode {
	n := &jsonNode{Open: open, Close: close, Items: items}
	for i, item := range items {
		item.Comma = i < len(items)-1
	}
	if len(items) > foldItems {
		n.Fold, n.Summary, n.Note = true, []visible.Segment{{Text: open + " … " + close}}, plural(len(items), one, many)
	}
	return n
}

// stringSegments is a JSON string's text as a page shows it, without
// quotes: backslashes and quotes escaped as JSON writes them, hidden
// characters (newlines included) as marked escapes.
func stringSegments(s string) []visible.Segment {
	segs := visible.Segments(s)
	for i := range segs {
		if !segs[i].Hidden {
			segs[i].Text = jsonEscaper.Replace(segs[i].Text)
		}
	}
	return segs
}

var jsonEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// quoted is stringSegments between quotes.
func quoted(s string) []visible.Segment {
	out := []visible.Segment{{Text: `"`}}
	out = append(out, stringSegments(s)...)
	return append(out, visible.Segment{Text: `"`})
}

// A page shows a text (a value, a program, console output) up to a
// number of characters, and up to about shownBytes bytes of HTML a
// character: a hidden character is shown as a marked escape (<mark
// class="hid" title="hidden character U+202E">\u202E</mark>), a line
// break starts a line of a program (its number and spans) or of console
// output, and a JSON value is laid out in spans, each at most about
// markBytes. 20,000 hidden characters or short lines would otherwise be
// 1.3 MB of HTML.
const (
	shownBytes = 8
	markBytes  = 80
)

// cutAt is the byte offset where a page cuts s to show at most chars
// characters and about chars×shownBytes bytes of HTML, a hidden
// character (a line break) counting markBytes; in code, a tab is shown
// as itself.
func cutAt(s string, chars int, code bool) int {
	budget := chars * shownBytes
	for i, r := range s {
		w := 1
		if visible.Hidden(r) && !(code && r == '\t') {
			w = markBytes
		}
		if chars == 0 || budget < w {
			return i
		}
		chars, budget = chars-1, budget-w
	}
	return len(s)
}

// html is about how many bytes of HTML n is shown in: its spans, and its
// texts with their hidden characters marked.
func (n *jsonNode) html() int {
	if n == nil {
		return 0
	}
	size := markBytes
	for _, segs := range [][]visible.Segment{n.Key, n.Text, n.Summary} {
		for _, s := range segs {
			size += len(s.Text)
			if s.Hidden {
				size += markBytes
			}
		}
	}
	for _, item := range n.Items {
		size += item.html()
	}
	return size
}

// codeLine is one line of a program.
type codeLine struct {
	N    int
	Text []visible.Segment
	// Mark: the line names a method awaiting approval.
	Mark bool
}

// codeView lays out a program's lines, marking those that name one of
// marks ("connector.method"). Tabs stay tabs and a line's CR of a CRLF
// ending goes; every other hidden character is marked.
func codeView(code string, marks []string) []codeLine {
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	out := make([]codeLine, len(lines))
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		segs := visible.Segments(l)
		for j := range segs {
			if segs[j].Rune == '\t' {
				segs[j] = visible.Segment{Text: "\t"}
			}
		}
		out[i] = codeLine{N: i + 1, Text: segs}
		for _, m := range marks {
			if strings.Contains(l, m) {
				out[i].Mark = true
			}
		}
	}
	return out
}

// age says how long ago t was, for people.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

func plural(n int, one, many string) string {
	s := strconv.Itoa(n)
	if n >= 10000 {
		s = groupThousands(s)
	}
	return s + " " + short.Plural(n, one, many)
}

func groupThousands(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Bounds of what a page shows of a run's log: a value longer than its
// preview is shown cut, with its size and a link that downloads it whole
// (valueView); the calls of a run are shown a page at a time.
const (
	// previewChars is what a run's page and the pending actions show of
	// a value.
	previewChars = 8000
	// listPreviewChars is what the list of runs shows of a value.
	listPreviewChars = 1000
	// callsPerPage is how many calls a run's page shows at once.
	callsPerPage = 100
	// listCalls is how many calls of each run the list of runs shows.
	listCalls = 20
	// textChars is what a run's page and the pending actions show of its
	// program, a run's page of its console output (line breaks count),
	// and the snippets of a snippet's code.
	textChars = 20000
)

// valueView is a logged value as a page shows it: a JSON value laid out,
// a text (an error message), or the start of a value too long to show,
// with its size and where to download it whole.
type valueView struct {
	ID   string // of its fold, stable across refreshes
	JSON *jsonNode
	Text []visible.Segment
	// Cut: Text is the value's first Shown characters; Size is how much
	// the whole takes, and Href downloads it.
	Cut   bool
	Shown string
	Size  string
	Href  string
}

// logValue shows a value of size bytes in the log, of which read was
// read (all of it, or its start: codemode.ClippedEntry); href downloads
// it whole. A value read whole but longer than preview characters (or
// than their HTML: cutAt) is cut here. A value shown whole is laid out as
// JSON (asJSON), else as text (an error message). Laid out, typical JSON
// takes about 10 bytes a character; a value of many small members, more
// than twice what text may take (preview×shownBytes), is shown as its
// text instead.
func logValue(id, read string, asJSON bool, size, preview int, href string) *valueView {
	if size == 0 && read == "" {
		return nil
	}
	head := read[:cutAt(read, preview, false)]
	switch {
	case len(head) != size:
		v := cutNote(head, size, href)
		v.ID, v.Text = id, visible.Segments(head)
		return v
	case asJSON:
		if n := jsonView(id, json.RawMessage(read)); n.html() <= 2*preview*shownBytes {
			return &valueView{ID: id, JSON: n}
		}
	}
	return &valueView{ID: id, Text: visible.Segments(read)}
}

// cutNote says that a text of size bytes is shown as its first part,
// head, and where href downloads it whole (nowhere when empty); nil when
// head is all of it.
func cutNote(head string, size int, href string) *valueView {
	if len(head) == size {
		return nil
	}
	return &valueView{Cut: true, Shown: plural(utf8.RuneCountInString(head), "character", "characters"), Size: short.Bytes(int64(size)), Href: href}
}

// valueHref is where the console downloads a value of run id whole: part
// ("args", "result" or "error") of call seq, or with seq 0 the run's
// ("result", "error", "code" or "logs").
func valueHref(id string, seq int, part string) string {
	q := url.Values{"part": {part}}
	if seq > 0 {
		q.Set("seq", strconv.Itoa(seq))
	}
	return "/runs/" + url.PathEscape(id) + "/value?" + q.Encode()
}

// actionView is one pending action.
type actionView struct {
	Seq       int
	Connector []visible.Segment
	Method    []visible.Segment
	Reason    string // why it needs approval (it may quote the path a program named)
	Args      *valueView
	// SignIn marks a call awaiting a sign-in to its connector; SignInWhy
	// says why.
	SignIn    bool
	SignInWhy []visible.Segment
}

// callView is one logged call or step.
type callView struct {
	Seq     int
	Name    []visible.Segment // connector.method, or step(name)
	State   string
	Reverts int
	Task    string // the downstream task the call runs as (its id is the downstream's)
	// DecidedBy names who approved or rejected the call ("" when
	// nobody did).
	DecidedBy []visible.Segment
	Args      *valueView
	Result    *valueView
	Error     *valueView
}

// pagerView says which calls of a run a page shows, and links to the
// others.
type pagerView struct {
	From, To, Total int    // calls From to To (counted from 1) of Total
	Prev, Next      string // the pages before and after, "" when none
}

// runView is one run as the pages show it.
type runView struct {
	ID     string
	Status string
	// StartedBy names who started the run ("" for a run logged before
	// people were recorded).
	StartedBy []visible.Segment
	Created   time.Time
	Updated   time.Time
	Age       string
	Error     *valueView
	Result    *valueView
	// Logs and Code are the run's console output and program, their
	// first textChars characters; LogsCut and CodeCut say so when that
	// is not all of them (nil when it is).
	Logs             [][]visible.Segment
	Code             []codeLine
	LogsCut, CodeCut *valueView
	Pending          []actionView
	// Approves names what Approve approves: the pending call's
	// connector.method, or how many calls are pending.
	Approves []visible.Segment
	// Digest names the pending actions shown (codemode.PendingDigest); it
	// travels with a decision.
	Digest      string
	Calls       []callView
	CallCount   int        // calls and steps in the log
	Pager       *pagerView // which calls Calls holds, when not all
	Paused      bool
	CanRollback bool
	// Other marks another's run, shown to an approver: only its id,
	// starter and pending actions (approvalView).
	Other bool
	// SignIns are the connectors the run awaits a sign-in to, in the
	// order of their calls; approval waits for them.
	SignIns []string
}

// newRunView lays out run e as readRun read it: every entry without its
// values (heads), the pending actions whole, and the calls to show, their
// values cut to preview characters.
func (c *Console) newRunView(e *codemode.Execution, heads []codemode.ClippedEntry, pending []codemode.PendingAction, calls []codemode.ClippedEntry, preview int) *runView {
	v := &runView{
		ID:        e.ID,
		Status:    e.Status.String(),
		StartedBy: visible.Segments(e.StartedBy.Display()),
		Created:   e.CreatedAt,
		Updated:   e.UpdatedAt,
		Age:       age(c.auth.now(), e.CreatedAt),
		Error:     logValue(e.ID+"-error", e.Error, false, len(e.Error), preview, valueHref(e.ID, 0, "error")),
		Paused:    e.Status == codemode.StatusPaused,
		CallCount: len(heads),
	}
	if e.Status == codemode.StatusCompleted {
		result := rawOrNull(e.Result)
		v.Result = logValue(e.ID+"-result", string(result), true, len(result), preview, valueHref(e.ID, 0, "result"))
	}
	logs := strings.Join(e.Logs, "\n")
	head := logs[:cutAt(logs, textChars, false)]
	v.LogsCut = cutNote(head, len(logs), valueHref(e.ID, 0, "logs"))
	for _, l := range e.Logs { // each line, as far as head goes
		n := min(len(l), len(head))
		v.Logs = append(v.Logs, visible.Segments(head[:n]))
		if n == len(head) {
			break
		}
		head = head[n+1:] // (and its line break)
	}
	var marks []string
	if v.Paused {
		marks = c.layPending(v, pending)
	}
	code := e.Code[:cutAt(e.Code, textChars, true)]
	v.Code, v.CodeCut = codeView(code, marks), cutNote(code, len(e.Code), valueHref(e.ID, 0, "code"))
	_, err := codemode.TransitionExec(e.Status, codemode.StatusRollingBack)
	rollbackable := err == nil
	for _, en := range heads {
		if rollbackable && en.Kind == codemode.KindCall && en.Reverts == 0 &&
			(en.State == codemode.EntryApplied || en.State == codemode.EntryUnknown) &&
			c.eng.Method(en.Connector, en.Method, en.Args).Revertible {
			v.CanRollback = true
			break
		}
	}
	for _, en := range calls {
		name := en.Connector + "." + en.Method
		if en.Kind == codemode.KindStep {
			name = "step(" + en.Name + ")"
		}
		id := fmt.Sprintf("%s-call-%d", e.ID, en.Seq)
		v.Calls = append(v.Calls, callView{
			Seq:       en.Seq,
			Name:      visible.Segments(name),
			State:     en.State.String(),
			Reverts:   en.Reverts,
			Task:      en.Task,
			DecidedBy: visible.Segments(en.DecidedBy.Display()),
			Args:      logValue(id+"-args", string(en.Args), true, en.Sizes.Args, preview, valueHref(e.ID, en.Seq, "args")),
			Result:    logValue(id+"-result", string(en.Result), true, en.Sizes.Result, preview, valueHref(e.ID, en.Seq, "result")),
			Error:     logValue(id+"-error", en.Error, false, en.Sizes.Error, preview, valueHref(e.ID, en.Seq, "error")),
		})
	}
	return v
}

// layPending lays out a paused run's pending actions on v (the actions,
// the digest a decision carries, what Approve names, the sign-ins they
// await) and returns the "connector.method" of each, to mark in the
// program.
func (c *Console) layPending(v *runView, pending []codemode.PendingAction) (marks []string) {
	v.Digest = codemode.PendingDigest(pending)
	for _, p := range pending {
		// Another's run's values are its starter's to download: an
		// approver is shown the arguments whole, as they are approved
		// (neither of cutAt's bounds cuts them).
		preview := previewChars
		if v.Other {
			preview = len(p.Args) * markBytes
		}
		av := actionView{
			Seq:       p.Seq,
			Connector: visible.Segments(p.Connector),
			Method:    visible.Segments(p.Method),
			Args:      logValue(fmt.Sprintf("%s-args-%d", v.ID, p.Seq), string(p.Args), true, len(p.Args), preview, valueHref(v.ID, p.Seq, "args")),
		}
		if p.Awaits == codemode.AwaitsSignIn {
			av.SignIn, av.SignInWhy = true, visible.Segments(p.Reason)
			if !slices.Contains(v.SignIns, p.Connector) && !v.Other {
				v.SignIns = append(v.SignIns, p.Connector)
			}
		} else {
			info := c.eng.Method(p.Connector, p.Method, p.Args)
			av.Reason = info.ApprovalReason
			if !info.Known {
				av.Reason = fmt.Sprintf("%s.%s is not served now (its connector is unavailable or changed): approving will be refused", p.Connector, p.Method)
			}
		}
		v.Pending = append(v.Pending, av)
		marks = append(marks, p.Connector+"."+p.Method)
	}
	if len(pending) == 1 {
		v.Approves = visible.Segments(pending[0].Connector + "." + pending[0].Method)
	} else {
		v.Approves = visible.Segments(plural(len(pending), "call", "calls"))
	}
	return marks
}

// approvalView lays out the pending actions of another's paused run (one
// run's, as the engine lists them to an approver): its id, its starter
// and the actions, with the forms to decide, and nothing else of it.
func (c *Console) approvalView(pending []codemode.PendingAction) *runView {
	v := &runView{ID: pending[0].ExecutionID, Status: codemode.StatusPaused.String(), Paused: true, Other: true,
		StartedBy: visible.Segments(pending[0].StartedBy.Display())}
	c.layPending(v, pending)
	return v
}

// outcomeView is the outcome of a decision, shown once after it, its
// values cut as the run's page cuts them.
type outcomeView struct {
	Verb    string
	Status  string
	Result  *valueView
	Error   *valueView
	Pending []actionView
	// A rollback's report.
	Reverted, UnknownReverted []int
	Failures                  []failureView
	NotReverted               []codemode.KeptCall
}

// failureView is a call a rollback could not revert, its error cut as a
// call's is. The whole error is in no download: the run's error quotes
// its start, and the revert's own calls are in the log.
type failureView struct {
	Seq               int
	Connector, Method string
	Error             *valueView
}

func newOutcomeView(f *flash) *outcomeView {
	o, id := f.outcome, f.outcome.ExecutionID
	v := &outcomeView{
		Verb:            f.verb,
		Status:          o.Status.String(),
		Error:           logValue(id+"-outcome-error", o.Error, false, len(o.Error), previewChars, valueHref(id, 0, "error")),
		Reverted:        o.Reverted,
		UnknownReverted: o.UnknownReverted,
		NotReverted:     o.NotReverted,
	}
	for _, f := range o.Failures {
		v.Failures = append(v.Failures, failureView{Seq: f.Seq, Connector: f.Connector, Method: f.Method,
			Error: logValue(fmt.Sprintf("%s-outcome-failure-%d", id, f.Seq), f.Error, false, len(f.Error), previewChars, "")})
	}
	if o.Status == codemode.StatusCompleted {
		v.Result = logValue(id+"-outcome", string(o.Result), true, len(o.Result), previewChars, valueHref(id, 0, "result"))
	}
	for _, p := range o.Pending {
		v.Pending = append(v.Pending, actionView{Seq: p.Seq, Connector: visible.Segments(p.Connector), Method: visible.Segments(p.Method),
			Args:   logValue(fmt.Sprintf("%s-outcome-%d", id, p.Seq), string(p.Args), true, len(p.Args), previewChars, valueHref(id, p.Seq, "args")),
			SignIn: p.Awaits == codemode.AwaitsSignIn, SignInWhy: visible.Segments(p.Reason)})
	}
	return v
}

// snippetView is one saved snippet.
type snippetView struct {
	Name          []visible.Segment
	Description   []visible.Segment
	Code          []codeLine
	CodeCut       *valueView // says Code is its first textChars characters (nil: all of it)
	InputSchema   *jsonNode
	Connectors    string
	FromExecution string
	Age           string
	Created       time.Time
}
