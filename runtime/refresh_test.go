package runtime_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// toolNames lists the sandbox names of connector name's tools.
func toolNames(rt *runtime.Runtime, name string) []string {
	var out []string
	for _, c := range rt.Connectors() {
		if c.Name != name {
			continue
		}
		for _, t := range c.Tools {
			out = append(out, t.Name)
		}
	}
	return out
}

// searchPaths returns the paths codemode.search finds for q.
func searchPaths(t *testing.T, e *env, q string) []string {
	t.Helper()
	raw, err := runtime.Search(e.ctx, e.rt, q)
	if err != nil {
		t.Fatal(err)
	}
	var h hits
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range h.Results {
		out = append(out, r.Path)
	}
	return out
}

// A downstream server that adds a tool (and announces it) is listed again
// by RefreshConnector: later programs, Connectors, search and the
// declarations see the new tool; a second refresh reports no change.
func TestRefreshConnectorPicksUpNewTools(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true})
	// Search the catalog first, so that its index exists before the change.
	if found := searchPaths(t, e, "brand new"); slices.Contains(found, "fx.brand_new") {
		t.Fatalf("search found fx.brand_new before it existed: %v", found)
	}
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "brand_new" })`, nil), codemode.StatusCompleted)

	before := e.run(`async () => await fx.brand_new({})`, nil)
	mustStatus(t, before, codemode.StatusError)
	if !strings.Contains(before.Error, "fx.brand_new is not a method of fx") {
		t.Fatalf("before the refresh: error %q, want the unknown-method error", before.Error)
	}

	changed, err := e.rt.RefreshConnector(e.ctx, "fx")
	if err != nil || !changed {
		t.Fatalf("RefreshConnector = %v, %v; want true, nil", changed, err)
	}
	if names := toolNames(e.rt, "fx"); !slices.Contains(names, "brand_new") || !slices.Contains(names, "get_sum") {
		t.Fatalf("tools after the refresh: %v", names)
	}
	if got := resultOf[string](t, e.run(`async () => await fx.brand_new({})`, nil)); got != "I am brand_new" {
		t.Fatalf("fx.brand_new() = %q", got)
	}
	if found := searchPaths(t, e, "brand new"); len(found) == 0 || found[0] != "fx.brand_new" {
		t.Fatalf("search after the refresh: %v, want fx.brand_new first", found)
	}
	decls, err := e.rt.Declarations("fx")
	if err != nil || !strings.Contains(decls, "brand_new(") {
		t.Fatalf("declarations of fx lack brand_new (err %v):\n%s", err, decls)
	}

	changed, err = e.rt.RefreshConnector(e.ctx, "fx")
	if err != nil || changed {
		t.Fatalf("second RefreshConnector = %v, %v; want false, nil", changed, err)
	}
}

// A paused execution that used a connector whose tools changed since is
// refused on approval, as after a restart.
func TestRefreshMakesPausedRunsStale(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true, fxApprove: []string{"counter"}})
	o := e.run(`async () => await fx.counter({ name: "x" })`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "other" })`, nil), codemode.StatusCompleted)
	if changed, err := e.rt.RefreshConnector(e.ctx, "fx"); err != nil || !changed {
		t.Fatalf("RefreshConnector = %v, %v", changed, err)
	}
	_, err := e.rt.Approve(e.ctx, o.ExecutionID, nil)
	if !errors.Is(err, codemode.ErrConnectorsChanged) || !strings.Contains(err.Error(), "fx (tools changed)") {
		t.Fatalf("approve after the refresh: %v; want ErrConnectorsChanged naming fx", err)
	}
	if n := e.effectCount("x"); n != 0 {
		t.Fatalf("the refused call ran %d times", n)
	}
}

func TestRefreshConnectorUnknown(t *testing.T) {
	e := newEnv(t, setup{})
	if _, err := e.rt.RefreshConnector(e.ctx, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("RefreshConnector(nope) = %v; want an error naming it", err)
	}
}
