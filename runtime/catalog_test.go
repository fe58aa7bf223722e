package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/connectors/openapi"
	"github.com/codemode-mcp/codemode-mcp/internal/tokens"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// broken is a connector whose tools cannot be listed.
type broken struct{}

func (broken) Name() string { return "broken" }
func (broken) Tools(context.Context) ([]connectors.Tool, error) {
	return nil, errors.New("server did not start")
}
func (broken) Call(context.Context, string, json.RawMessage) (connectors.Result, error) {
	return connectors.Result{}, errors.New("unreachable")
}
func (broken) Close() error                          { return nil }
func (broken) Capabilities() connectors.Capabilities { return connectors.Capabilities{} }

func TestConnectorsApprovalAndBrokenSource(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxApprove: []string{"ech*", "get-sum"}, extra: []catalog.Source{{Connector: broken{}}}})
	infos := e.rt.Connectors()
	var names []string
	approval := map[string]bool{}
	for _, c := range infos {
		names = append(names, c.Name)
		for _, tl := range c.Tools {
			approval[c.Name+"."+tl.Name] = tl.RequiresApproval
		}
	}
	if diff := cmp.Diff([]string{"kv", "fx", "broken"}, names); diff != "" {
		t.Errorf("connector order (-want +got):\n%s", diff)
	}
	if infos[2].Error != "server did not start" || len(infos[2].Tools) != 0 {
		t.Errorf("broken connector info = %+v", infos[2])
	}
	want := map[string]bool{
		"kv.put": true, "kv.get": false, // the connector's own verdict
		"fx.delete_thing": true, // destructiveHint
		"fx.echo":         true, // glob over the sandbox name
		"fx.get_sum":      true, // glob over the source name
		"fx.structured":   false,
	}
	for k, v := range want {
		if approval[k] != v {
			t.Errorf("%s requiresApproval = %v, want %v", k, approval[k], v)
		}
	}
	// The broken connector has no global; the others work.
	o := e.run(`async () => typeof broken`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[string](t, o); got != "undefined" {
		t.Errorf("typeof broken = %q, want undefined", got)
	}
	if d, err := e.rt.Declarations(""); err != nil || strings.Contains(d, "declare const broken") {
		t.Errorf("declarations include the broken connector (err %v)", err)
	}
}

func TestNewRefusesBadConfiguration(t *testing.T) {
	e := newEnv(t, setup{})
	tests := []struct {
		name    string
		sources []catalog.Source
		want    string
	}{
		{"duplicate", []catalog.Source{{Connector: newKV("a")}, {Connector: newKV("a")}}, `two sources are named "a"`},
		{"reserved", []catalog.Source{{Connector: newKV("codemode")}}, "reserved"},
		{"bad glob", []catalog.Source{{Connector: newKV("a"), Approve: []string{"[x"}}}, `approve glob "[x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runtime.New(e.ctx, runtime.Options{Store: e.store, Executor: e.exec, Sources: tc.sources})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

type hit struct {
	Path             string  `json:"path"`
	Connector        string  `json:"connector,omitempty"`
	Method           string  `json:"method,omitempty"`
	Kind             string  `json:"kind"`
	Description      string  `json:"description"`
	RequiresApproval bool    `json:"requiresApproval,omitempty"`
	Score            float64 `json:"score"`
}

type hits struct {
	Results []hit `json:"results"`
	Total   int   `json:"total"`
}

func TestSearch(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	search := func(q string) hits {
		t.Helper()
		raw, err := runtime.Search(e.ctx, e.rt, q)
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		var h hits
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		query, first string
	}{
		{"get sum", "fx.get_sum"},
		{"getSum", "fx.get_sum"},
		{"get-sum", "fx.get_sum"},
		{"delete thing", "fx.delete_thing"},
		{"previous value", "kv.put"}, // description words
		{"kv", "kv"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			h := search(tc.query)
			if len(h.Results) == 0 || h.Results[0].Path != tc.first {
				t.Fatalf("first hit for %q = %+v, want %s", tc.query, h.Results, tc.first)
			}
			for i := 1; i < len(h.Results); i++ {
				a, b := h.Results[i-1], h.Results[i]
				if a.Score < b.Score || a.Score == b.Score && a.Path > b.Path {
					t.Errorf("results out of order at %d: %+v then %+v", i, a, b)
				}
			}
		})
	}
	got := search("getSum").Results[0]
	want := hit{Path: "fx.get_sum", Connector: "fx", Method: "get_sum", Kind: "method", Description: "Adds two numbers."}
	if got.Score <= 0 {
		t.Errorf("get_sum hit has score %v, want > 0", got.Score)
	}
	got.Score = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("get_sum hit (-want +got):\n%s", diff)
	}
	// Both methods named for a sum come first for "sum" (record_sum also
	// says "sum" in its description).
	if r := search("sum").Results; len(r) < 2 || !(r[0].Path == "fx.get_sum" && r[1].Path == "fx.record_sum" || r[0].Path == "fx.record_sum" && r[1].Path == "fx.get_sum") {
		t.Errorf(`search("sum") = %+v, want get_sum and record_sum first`, r)
	}
	if h := search("delete"); !h.Results[0].RequiresApproval {
		t.Errorf("delete_thing hit lacks requiresApproval: %+v", h.Results[0])
	}
	all := search("")
	// kv: connector + 5 methods; fx: connector + its methods.
	fxTools := len(e.rt.Connectors()[1].Tools)
	if all.Total != 2+5+fxTools || len(all.Results) != min(20, all.Total) {
		t.Errorf("empty query: total %d, %d results; want %d, capped at 20", all.Total, len(all.Results), 2+5+fxTools)
	}
	// A query is a few words: a long one is refused, naming the bound.
	if _, err := runtime.Search(e.ctx, e.rt, strings.Repeat("word ", 300)); err == nil || !strings.Contains(err.Error(), "1500 bytes long; at most 1000") {
		t.Errorf("a 1,500-byte query: %v", err)
	}
	if _, err := runtime.Search(e.ctx, e.rt, strings.Repeat("w", 1000)); err != nil {
		t.Errorf("a 1,000-byte query: %v", err)
	}
	if h := search("zzzqqq"); h.Total != 0 || h.Results == nil {
		t.Errorf("no match: %+v, want an empty results array", h)
	}

	// The sandbox sees the same value.
	o := e.run(`async () => (await codemode.search("getSum")).results[0].path`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if p := resultOf[string](t, o); p != "fx.get_sum" {
		t.Errorf("codemode.search in the sandbox = %q", p)
	}
}

func TestDescribe(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	tests := []struct {
		path, kind string
		approval   bool
		types      []string
	}{
		{"kv", "connector", false, []string{"declare const kv", "put(input:"}},
		{"kv.put", "method", true, []string{"declare const kv: {", "  put(input: KvPutInput)", "Requires approval."}},
		{"fx.get_sum", "method", false, []string{"declare const fx: {", "  get_sum(input: FxGetSumInput)", "a: number"}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			raw, err := runtime.Describe(e.ctx, e.rt, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Path, Kind, Description, Types string
				RequiresApproval               bool
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			if d.Path != tc.path || d.Kind != tc.kind || d.RequiresApproval != tc.approval {
				t.Errorf("describe %s = %s", tc.path, raw)
			}
			for _, w := range tc.types {
				if !strings.Contains(d.Types, w) {
					t.Errorf("types of %s lack %q:\n%s", tc.path, w, d.Types)
				}
			}
		})
	}
	// A connector lists its methods with their summaries.
	raw, err := runtime.Describe(e.ctx, e.rt, "kv")
	if err != nil {
		t.Fatal(err)
	}
	var conn struct {
		Methods []struct {
			Method, Description string
			RequiresApproval    bool
		}
	}
	if err := json.Unmarshal(raw, &conn); err != nil {
		t.Fatal(err)
	}
	byName := map[string]bool{}
	for _, m := range conn.Methods {
		byName[m.Method] = m.RequiresApproval
		if m.Description == "" && m.Method == "get" {
			t.Errorf("kv.get has no description in %s", raw)
		}
	}
	if approval, ok := byName["put"]; !ok || !approval || byName["get"] {
		t.Errorf("describe kv methods = %s", raw)
	}

	_, err = runtime.Describe(e.ctx, e.rt, "fx.get_summ")
	if err == nil || !strings.Contains(err.Error(), `unknown path "fx.get_summ"; nearest: fx.get_sum`) {
		t.Errorf("unknown path: %v", err)
	}
	long := "fx.get_summ" + strings.Repeat("m", 1<<20)
	if _, err = runtime.Describe(e.ctx, e.rt, long); err == nil || !strings.Contains(err.Error(), `unknown path "`+long[:80]+`…"; nearest: fx.get_sum`) {
		t.Errorf("unknown long path: %.200v", err)
	}
	o := e.run(`async () => (await codemode.describe("kv.get")).types`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if !strings.Contains(resultOf[string](t, o), "  get(input: KvGetInput): Promise<KvGetOutput>;") {
		t.Errorf("codemode.describe in the sandbox = %s", o.Result)
	}
}

// groupedDocument is the API of TestDescribeGroups: two operations tagged
// issues and one alpha, two untagged under /repos, one untagged at the
// root.
const groupedDocument = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
  "/repos/{owner}":{"get":{"operationId":"getRepo","responses":{"200":{"description":"ok"}}},
    "delete":{"operationId":"deleteRepo","responses":{"204":{"description":"ok"}}}},
  "/repos/{owner}/issues":{"get":{"operationId":"listIssues","tags":["issues"],"summary":"List issues","responses":{"200":{"description":"ok"}}},
    "post":{"operationId":"createIssue","tags":["issues","write"],"responses":{"201":{"description":"ok"}}}},
  "/zen":{"get":{"operationId":"zen","tags":["alpha"],"responses":{"200":{"description":"ok"}}}},
  "/{id}":{"get":{"operationId":"byId","responses":{"200":{"description":"ok"}}}}
}}`

// TestDescribeGroups: describe of a connector lists its groups (an
// operation's first tag, else the first segment of its path) by name, then
// its methods group by group in the document's order, those in no group
// last; describe of a namespace lists its connectors as groups.
func TestDescribeGroups(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(doc, []byte(groupedDocument), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := openapi.New(context.Background(), openapi.Config{Name: "api", Document: doc, BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := newEnv(t, setup{noKV: true, extra: []catalog.Source{{Connector: c}, {Connector: newKV("ns.a")}, {Connector: newKV("ns.b")}}})
	type described struct {
		Kind   string
		Groups []struct {
			Name  string
			Count int
		}
		Methods []struct{ Method, Group, Description string }
	}
	describe := func(path string) described {
		t.Helper()
		raw, err := runtime.Describe(e.ctx, e.rt, path)
		if err != nil {
			t.Fatal(err)
		}
		var d described
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	flat := func(d described) (groups, methods []string) {
		for _, g := range d.Groups {
			groups = append(groups, fmt.Sprintf("%s %d", g.Name, g.Count))
		}
		for _, m := range d.Methods {
			methods = append(methods, m.Group+" "+m.Method)
		}
		return groups, methods
	}
	api := describe("api")
	groups, methods := flat(api)
	if diff := cmp.Diff([]string{"alpha 1", "issues 2", "repos 2"}, groups); diff != "" {
		t.Errorf("groups of api (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"alpha zen", "issues listIssues", "issues createIssue", "repos getRepo", "repos deleteRepo", " byId", " request", " spec"}, methods); diff != "" {
		t.Errorf("methods of api (-want +got):\n%s", diff)
	}
	if api.Methods[1].Description != "List issues" {
		t.Errorf("listIssues: %+v", api.Methods[1])
	}
	ns := describe("ns")
	groups, methods = flat(ns)
	if ns.Kind != "namespace" || len(groups) != 2 || !strings.HasPrefix(groups[0], "ns.a ") || !strings.HasPrefix(groups[1], "ns.b ") || !slices.Contains(methods, "ns.b put") || len(methods) != ns.Groups[0].Count+ns.Groups[1].Count {
		t.Errorf("describe ns: %s %v %v", ns.Kind, groups, methods)
	}
	// A program browses: the methods of one group.
	o := e.run(`async () => (await codemode.describe("api")).methods.filter((m) => m.group === "issues").map((m) => m.method)`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[[]any](t, o); !cmp.Equal(got, []any{"listIssues", "createIssue"}) {
		t.Errorf("issues group in a program: %v", got)
	}
}

func TestDeclarations(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	all, err := e.rt.Declarations("")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"declare const codemode", "step<T>(name: string", "declare const kv", "declare const fx"} {
		if !strings.Contains(all, w) {
			t.Errorf("Declarations(\"\") lacks %q", w)
		}
	}
	one, err := e.rt.Declarations("kv")
	if err != nil || !strings.Contains(one, "declare const kv") || strings.Contains(one, "declare const fx") {
		t.Errorf("Declarations(kv) = %q, %v", one, err)
	}
	if _, err := e.rt.Declarations("kvv"); err == nil || !strings.Contains(err.Error(), `unknown connector "kvv"; connectors: kv`) {
		t.Errorf("Declarations(kvv): %v", err)
	}
}

// DeclarationsWithin returns every declaration while they fit, and says
// they do not without generating them once a lower bound of their size
// is past the budget.
func TestDeclarationsWithin(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	all, err := e.rt.Declarations("")
	if err != nil {
		t.Fatal(err)
	}
	n := tokens.Estimate(all)
	if d, fits := e.rt.DeclarationsWithin(n); !fits || d != all {
		t.Errorf("budget = their size in tokens (%d): fits %v", n, fits)
	}
	if d, fits := e.rt.DeclarationsWithin(n - 1); fits || d != "" {
		t.Errorf("budget one token short: fits %v, %d bytes", fits, len(d))
	}
	if d, fits := e.rt.DeclarationsWithin(10); fits || d != "" {
		t.Errorf("tiny budget: fits %v", fits)
	}
}
