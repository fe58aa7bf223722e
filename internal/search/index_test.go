package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// method is a test document: name, summary, description.
func method(name, summary, text string) Doc[string] {
	var d Doc[string]
	d.Value = name
	d.Fields[Name] = name
	d.Fields[Summary] = summary
	d.Fields[Text] = text
	return d
}

func paths(hs []Hit[string]) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Value
	}
	return out
}

func first(t *testing.T, ix *Index[string], q string) string {
	t.Helper()
	hs := ix.Search(q)
	if len(hs) == 0 {
		return ""
	}
	return hs[0].Value
}

var tracker = []Doc[string]{
	method("issues_create", "Create an issue", "Any user with pull access to a repository can create an issue."),
	method("issues_list", "List issues", "List issues in a repository."),
	method("issues_delete_comment", "Delete an issue comment", ""),
	method("issues_update", "Update an issue", "Issue owners and users with push access can edit an issue."),
	method("repos_get", "Get a repository", ""),
	method("repos_create_for_authenticated_user", "Create a repository for the authenticated user", ""),
	method("pulls_merge", "Merge a pull request", "Merges a pull request into the base branch."),
	method("pulls_list", "List pull requests", ""),
	method("issues_remove_assignees", "Remove assignees from an issue", "Removes users assigned to an issue."),
	method("actions_disable_workflow", "Disable a workflow", ""),
	method("actions_enable_workflow", "Enable a workflow", ""),
	method("get_sum", "Get Sum Tool", "Returns the sum of two numbers"),
	method("echo", "Echo Tool", "Echoes back the input string"),
	method("repos_list_deployments", "List deployments", "Simple filtering of deployments is available."),
	method("dependabot_list_alerts", "List Dependabot alerts", "Lists vulnerability alerts for the dependencies of a repository."),
}

func TestSearchRanks(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment(tracker))
	tests := []struct{ query, want string }{
		{"create issue", "issues_create"},
		{"issues_create", "issues_create"},
		{"issuesCreate", "issues_create"},
		{"open a new issue", "issues_create"}, // open ≈ create
		{"edit an issue", "issues_update"},    // its description says edit
		{"merge a PR", "pulls_merge"},         // PR = pull request
		{"list PRs", "pulls_list"},
		{"get a repo", "repos_get"},                                     // repo = repository
		{"create my repository", "repos_create_for_authenticated_user"}, // my → authenticated
		{"merged pull requests", "pulls_merge"},                         // stems
		{"add two numbers", "get_sum"},                                  // add ≈ sum
		{"turn off a workflow", "actions_disable_workflow"},             // a phrasal verb
		{"switch on the workflow", "actions_enable_workflow"},
		{"set up a new issue", "issues_create"},
		{"remove an issue comment", "issues_delete_comment"},          // remove ≈ delete
		{"turn the nightly workflow off", "actions_disable_workflow"}, // its object between
		{"show what got deployed", "repos_list_deployments"},          // one root: deploy, deployment
	}
	for _, tc := range tests {
		if got := first(t, ix, tc.query); got != tc.want {
			t.Errorf("first hit for %q = %q, want %q (all: %v)", tc.query, got, tc.want, paths(ix.Search(tc.query)))
		}
	}
}

func TestSearchNoMatch(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment(tracker))
	for _, q := range []string{"zzzqqq", "the of a"} {
		hs := ix.Search(q)
		if q == "the of a" {
			// Only stop words: like an empty query, everything.
			if len(hs) != len(tracker) {
				t.Errorf("%q: %d hits, want all %d", q, len(hs), len(tracker))
			}
			continue
		}
		if len(hs) != 0 {
			t.Errorf("%q: %v, want no hits", q, paths(hs))
		}
	}
	if hs := (*Index[string])(nil).Search("issue"); hs != nil {
		t.Errorf("empty index: %v", hs)
	}
}

func TestSearchEmptyQueryListsAll(t *testing.T) {
	ix := (*Index[string])(nil).With("b", NewSegment(tracker[:2])).With("a", NewSegment(tracker[2:4]))
	hs := ix.Search("")
	// In index order: by segment name, then document order.
	want := paths(nil)
	for _, d := range append(slices.Clone(tracker[2:4]), tracker[:2]...) {
		want = append(want, d.Value)
	}
	if diff := cmp.Diff(want, paths(hs)); diff != "" {
		t.Errorf("empty query (-want +got):\n%s", diff)
	}
	for _, h := range hs {
		if h.Score != 1 {
			t.Errorf("empty query: score %v for %s, want 1", h.Score, h.Value)
		}
	}
}

func TestSearchScoresDescend(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment(tracker))
	hs := ix.Search("issue")
	if len(hs) < 4 {
		t.Fatalf("issue: %v", paths(hs))
	}
	pos := func(v string) int { return slices.IndexFunc(tracker, func(d Doc[string]) bool { return d.Value == v }) }
	for i := 1; i < len(hs); i++ {
		a, b := hs[i-1], hs[i]
		if a.Score < b.Score || a.Score == b.Score && pos(a.Value) > pos(b.Value) {
			t.Errorf("out of order at %d: %v then %v (equal scores in index order)", i, a, b)
		}
	}
}

// With replaces one group's documents and keeps the others; statistics
// follow.
func TestIndexWith(t *testing.T) {
	a := NewSegment(tracker[:4])
	echo := method("echo", "Echo Tool", "Echoes back the input string")
	b := NewSegment([]Doc[string]{echo})
	ix := (*Index[string])(nil).With("a", a).With("b", b)
	if ix.Len() != 5 {
		t.Fatalf("Len = %d, want 5", ix.Len())
	}
	if got := first(t, ix, "echo"); got != "echo" {
		t.Errorf("echo: %q", got)
	}
	b2 := NewSegment([]Doc[string]{method("shout", "Shout Tool", "Shouts the input string")})
	ix2 := ix.With("b", b2)
	if ix2.Len() != 5 || first(t, ix2, "echo") != "" || first(t, ix2, "shout") != "shout" {
		t.Errorf("after replacing b: Len %d, echo %q, shout %q", ix2.Len(), first(t, ix2, "echo"), first(t, ix2, "shout"))
	}
	// The old index is unchanged.
	if first(t, ix, "echo") != "echo" || first(t, ix, "shout") != "" {
		t.Error("With changed the index it was called on")
	}
	ix3 := ix2.With("a", nil)
	if ix3.Len() != 1 || first(t, ix3, "issue") != "" {
		t.Errorf("after removing a: Len %d, issue %q", ix3.Len(), first(t, ix3, "issue"))
	}
	// Scores of one document depend on the whole index (idf), and only on
	// its contents, not on how it was put together.
	whole := (*Index[string])(nil).With("x", NewSegment(append(append([]Doc[string]{}, tracker[:4]...), echo)))
	s1, s2 := ix.Search("create issue"), whole.Search("create issue")
	if len(s1) == 0 || len(s1) != len(s2) || fmt.Sprintf("%.6f", s1[0].Score) != fmt.Sprintf("%.6f", s2[0].Score) {
		t.Errorf("segmented %v vs whole %v", s1, s2)
	}
}

func BenchmarkSearch(b *testing.B) {
	var docs []Doc[string]
	for i := range 1200 {
		d := tracker[i%len(tracker)]
		d.Value = fmt.Sprintf("%s_%d", d.Value, i)
		d.Fields[Name] = d.Value
		docs = append(docs, d)
	}
	ix := (*Index[string])(nil).With("t", NewSegment(docs))
	b.ReportAllocs()
	for b.Loop() {
		ix.Search("merge a pull request")
	}
}

// A question wants a method that reads; a request to change something
// wants one that writes, when the methods say which they are: of two
// documents alike but for their effect, the one the query's mood asks
// for comes first, whichever the index holds first.
func TestSearchMood(t *testing.T) {
	alike := func(name string, e Effect) Doc[string] {
		d := method(name, "Thread subscription", "The subscription of a notification thread.")
		d.Effect = e
		return d
	}
	// The names have no word vectors: only the effect tells them apart.
	w, r, u := alike("m1", Writes), alike("m2", Reads), alike("m3", Unknown)
	for _, order := range [][]Doc[string]{{w, r, u}, {r, w, u}} {
		ix := (*Index[string])(nil).With("t", NewSegment(order))
		for q, want := range map[string]string{
			"what is my thread subscription":          "m2",
			"thread subscription?":                    "m2",
			"set the thread subscription":             "m1",
			"how do I change the thread subscription": "m1",
		} {
			if got := first(t, ix, q); got != want {
				t.Errorf("%q: first %q, want %q (index order %s first)", q, got, want, order[0].Value)
			}
		}
	}
	for q, want := range map[string]Effect{
		"which checks failed":         Reads,
		"are the checks green?":       Reads,
		"how to merge a pull request": Writes,
		"show me the open issues":     Reads,
		"delete the branch":           Writes,
		"pull requests":               Unknown,
		"recent deploys?":             Reads,
	} {
		if got := parseQuery(q, nil).mood; got != want {
			t.Errorf("mood of %q = %v, want %v", q, got, want)
		}
	}
}

// How a query says what it asks to do: its leading verb; a noun used as
// a verb where an object follows it; a verb leading a later clause when
// the first states a situation; phrasal verbs joined.
func TestQueryVerb(t *testing.T) {
	verb := func(q string) string {
		qr := parseQuery(q, nil)
		if qr.verb >= 0 {
			return qr.concepts[qr.verb].variants[0].term
		}
		return ""
	}
	for q, want := range map[string]string{
		"merge a pull request":                               "merg",
		"comment on an issue":                                "comment",
		"label issue 17 as a bug":                            "label",
		"file a bug about the login page":                    "fil",
		"comment history of a repository":                    "",
		"CI flaked, rerun the jobs that failed":              "rerun",
		"the webhook delivery failed; send it again":         "send",
		"thumbs up that comment":                             "react",
		"shut down my codespace":                             "stop",
		"ban a spammer from our org":                         "ban",
		"reviews on a pull request":                          "",
		"a release went out broken, please take it down now": "delet",
	} {
		if got := verb(q); got != want {
			t.Errorf("verb of %q = %q, want %q", q, got, want)
		}
	}
	// A noun used as a verb asks to add one: the soft create concept.
	cs := parseQuery("comment on an issue", nil).concepts
	if last := cs[len(cs)-1]; !last.soft || last.variants[0].term != Stem("create") {
		t.Errorf("comment on an issue: %+v, want a soft create concept last", cs)
	}
	ix := (*Index[string])(nil).With("t", NewSegment([]Doc[string]{
		method("issues_list_comments", "List issue comments", "Lists the comments on an issue."),
		method("issues_create_comment", "Create an issue comment", "Adds a comment to an issue."),
	}))
	if got := first(t, ix, "comment on an issue"); got != "issues_create_comment" {
		t.Errorf("comment on an issue: first %q (all: %v)", got, paths(ix.Search("comment on an issue")))
	}
	if got := first(t, ix, "comments on an issue"); got != "issues_list_comments" {
		t.Errorf("comments on an issue: first %q (all: %v)", got, paths(ix.Search("comments on an issue")))
	}
}

// A leading word the index does not hold, before what a verb acts on, is
// a verb: the query asks to change something, not to read ("slap a
// label on issue 7" adds one); a question or a word the index holds stays
// what it was.
func TestUnknownVerb(t *testing.T) {
	add := method("issues_add_labels", "Add labels to an issue", "")
	add.Effect = Writes
	list := method("issues_list_labels_on_issue", "List labels for an issue", "")
	list.Effect = Reads
	ix := (*Index[string])(nil).With("t", NewSegment([]Doc[string]{list, add}))
	for q, want := range map[string]string{
		"slap a label on issue 7":    "issues_add_labels",
		"labels on issue 7":          "issues_list_labels_on_issue",
		"what labels are on issue 7": "issues_list_labels_on_issue",
	} {
		if got := first(t, ix, q); got != want {
			t.Errorf("%q: first %q, want %q (all: %v)", q, got, want, paths(ix.Search(q)))
		}
	}
	known := func(term string) bool { return term != "slap" }
	if cs := parseQuery("slap a label on issue 7", known); cs.verb != 0 {
		t.Errorf("slap a label on issue 7: %+v, want slap the verb", cs)
	}
	if cs := parseQuery("slap a label on issue 7", nil); cs.verb >= 0 {
		t.Errorf("slap a label on issue 7, every word known: %+v, want no verb", cs)
	}
}

// A word the index does not hold does not lower every document's share
// of the query alike: with a word that neither the documents nor the
// word vectors know, the scores are those of the query without it.
func TestCoverageOfKnownWords(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment(tracker))
	a, b := ix.Search("merge a pull request"), ix.Search("merge a pull request qzxv")
	if diff := cmp.Diff(a, b); diff != "" || len(a) == 0 || a[0].Value != "pulls_merge" {
		t.Errorf("merge a pull request, and with qzxv (-+): %s", diff)
	}
}

// A query word finds, at a lower weight, the indexed terms of its root
// (deploy: deployment) and, when no document holds it, those it begins
// (depend: dependabot).
func TestSearchWordForms(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment([]Doc[string]{
		method("pages_deploy", "Deploy a site", ""),
		method("repos_list_deployments", "List deployments", ""),
		method("dependabot_list_alerts", "List Dependabot alerts", "Lists vulnerability alerts."),
	}))
	for q, want := range map[string][]string{
		"deploy":     {"pages_deploy", "repos_list_deployments"},
		"deployment": {"repos_list_deployments", "pages_deploy"},
		"depend":     {"dependabot_list_alerts"},
	} {
		if got := paths(ix.Search(q)); !cmp.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

// Len is the number of documents in the index.
func (ix *Index[T]) Len() int {
	if ix == nil {
		return 0
	}
	return ix.n
}

// TestSearchUnicodeForms: a query finds a method whatever Unicode form
// either is written in: composed or decomposed accents, ß or ss, a final
// sigma or a capital one.
func TestSearchUnicodeForms(t *testing.T) {
	ix := (*Index[string])(nil).With("t", NewSegment([]Doc[string]{
		method("menu_get", "Get the cafe\u0301 menu", ""),
		method("street_find", "Find a Straße", ""),
		method("logos_list", "List the λόγος", ""),
		method("echo", "Echo Tool", ""),
	}))
	for q, want := range map[string]string{
		"caf\u00e9 menu": "menu_get",
		"CAF\u00c9":      "menu_get",
		"strasse":        "street_find",
		"STRASSE":        "street_find",
		"ΛΌΓΟΣ":          "logos_list",
		"λόγοσ":          "logos_list",
	} {
		if got := first(t, ix, q); got != want {
			t.Errorf("%q: first is %q, want %q", q, got, want)
		}
	}
}
