package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// digestOf is the digest of what execution id has pending now, as a
// surface that shows it computes it: from the log.
func (e *env) digestOf(id string) string {
	e.t.Helper()
	_, entries, err := e.rt.Execution(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Execution(%s): %v", id, err)
	}
	return codemode.PendingDigest(codemode.PendingActions(id, entries))
}

// A decision carries the digest of what was shown; a run that moved on
// since (approved elsewhere, paused at the next call) is not approved or
// rejected on the strength of the old view, and nothing runs.
func TestReviewedDecisionsNeedWhatWasShown(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "a", value: "1" }); await kv.put({ key: "b", value: "2" }); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	id := o.ExecutionID
	shownFirst := e.digestOf(id)

	// Someone else approves the first put; the run pauses at the second.
	mustStatus(t, e.approve(id, nil), codemode.StatusPaused)
	puts := e.kv.count("put")

	for _, decide := range []struct {
		name string
		do   func(codemode.Review) (codemode.Outcome, error)
	}{
		{"approve", func(rv codemode.Review) (codemode.Outcome, error) { return e.rt.Resume(e.ctx, id, rv) }},
		{"reject", func(rv codemode.Review) (codemode.Outcome, error) { return e.rt.RejectReviewed(e.ctx, id, 0, rv) }},
	} {
		t.Run(decide.name, func(t *testing.T) {
			out, err := decide.do(codemode.Review{Digest: shownFirst})
			if !errors.Is(err, codemode.ErrNotAsShown) || !codemode.IsRefusal(err) {
				t.Fatalf("decision on the old view: %v, want ErrNotAsShown", err)
			}
			if out.Status != codemode.StatusPaused || !strings.Contains(err.Error(), "changed since they were shown") {
				t.Errorf("outcome %+v, error %q", out, err)
			}
			if got := e.status(id); got != codemode.StatusPaused {
				t.Errorf("status after the refusal = %s, want paused", got)
			}
			if diff := cmp.Diff([]string{"1 kv.put applied", "2 kv.put pending"}, e.log(id)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
	if got := e.kv.count("put"); got != puts {
		t.Fatalf("a refused decision ran %d puts", got-puts)
	}

	// With the digest of what is pending now, the approval goes through.
	a, err := e.rt.Resume(e.ctx, id, codemode.Review{Digest: e.digestOf(id)})
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, a, codemode.StatusCompleted)
	if v, _ := e.kv.get("b"); v != "2" {
		t.Errorf("b = %q after the approval", v)
	}
}

func TestRejectReviewedKeepsTheReason(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`await kv.put({ key: "a", value: "1" })`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	reason := "wrong key\n\u202eevil" + strings.Repeat("x", 600)
	r, err := e.rt.RejectReviewed(e.ctx, o.ExecutionID, 1, codemode.Review{Digest: e.digestOf(o.ExecutionID), Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRejected)
	// On one line, without the override, cut to MaxReasonChars.
	want := "call 1 (kv.put) was rejected by the user: wrong key evil" + strings.Repeat("x", codemode.MaxReasonChars-len("wrong key evil")) + "…"
	if r.Error != want {
		t.Errorf("error = %q", r.Error)
	}
	if e.kv.count("put") != 0 {
		t.Error("the rejected put ran")
	}
}

func TestPendingDigestNamesEverything(t *testing.T) {
	base := codemode.PendingAction{ExecutionID: "exec_1", Seq: 2, Connector: "kv", Method: "put", Args: []byte(`{"key":"a"}`)}
	d := codemode.PendingDigest([]codemode.PendingAction{base})
	variants := []func(*codemode.PendingAction){
		func(a *codemode.PendingAction) { a.ExecutionID = "exec_2" },
		func(a *codemode.PendingAction) { a.Seq = 3 },
		func(a *codemode.PendingAction) { a.Connector = "kv2" },
		func(a *codemode.PendingAction) { a.Method = "add" },
		func(a *codemode.PendingAction) { a.Args = []byte(`{"key":"b"}`) },
		func(a *codemode.PendingAction) { a.Args = []byte(`{"key": "a"}`) }, // the text as logged, not its meaning
		func(a *codemode.PendingAction) { a.Connector, a.Method = "kvp", "ut" },
	}
	for i, v := range variants {
		a := base
		v(&a)
		if codemode.PendingDigest([]codemode.PendingAction{a}) == d {
			t.Errorf("variant %d has the same digest", i)
		}
	}
	if codemode.PendingDigest([]codemode.PendingAction{base, base}) == d || codemode.PendingDigest(nil) == d {
		t.Error("the number of actions does not change the digest")
	}
}

// routed is an HTTP API's connector with one DELETE operation, which it
// annotates destructive (as the OpenAPI connector does).
type routed struct{}

func (routed) Name() string                          { return "petstore" }
func (routed) Close() error                          { return nil }
func (routed) Capabilities() connectors.Capabilities { return connectors.Capabilities{} }
func (routed) Tools(context.Context) ([]connectors.Tool, error) {
	yes := true
	return []connectors.Tool{{Name: "deletePet", SourceName: "deletePet", Route: "DELETE /pets/{id}", RequiresApproval: true,
		InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: connectors.Annotations{Destructive: &yes}}}, nil
}
func (routed) Call(context.Context, string, json.RawMessage) (connectors.Result, error) {
	return connectors.Result{}, nil
}

func TestMethodExplainsApprovalAndRevert(t *testing.T) {
	e := newEnv(t, setup{mcp: true, fxApprove: []string{"counter"}, fxRevert: map[string]string{"counter": "(args) => fx.uncount({ name: args.name })"},
		extra: []catalog.Source{{Connector: routed{}}}})
	tests := []struct {
		connector, method string
		want              codemode.MethodInfo
	}{
		{"kv", "put", codemode.MethodInfo{Known: true, ApprovalReason: "kv requires approval for put", Revertible: true}},
		{"kv", "get", codemode.MethodInfo{Known: true, ReadOnly: true}},
		{"kv", "add", codemode.MethodInfo{Known: true, Revertible: true}},
		{"fx", "counter", codemode.MethodInfo{Known: true, ApprovalReason: "the configuration's approve list for fx matches counter", Revertible: true}},
		{"fx", "delete_thing", codemode.MethodInfo{Known: true, ApprovalReason: "fx marks delete_thing as destructive"}},
		// The rule for DELETE is ours, not the API's.
		{"petstore", "deletePet", codemode.MethodInfo{Known: true, ApprovalReason: "deletePet is an HTTP DELETE operation, and codemode-mcp asks before every POST, PUT, PATCH and DELETE (no_approve lifts it)"}},
		{"fx", "nope", codemode.MethodInfo{}},
		{"gone", "put", codemode.MethodInfo{}},
	}
	for _, tc := range tests {
		if got := e.rt.Method(tc.connector, tc.method, []byte(`{}`)); got != tc.want {
			t.Errorf("Method(%s, %s) = %+v, want %+v", tc.connector, tc.method, got, tc.want)
		}
	}
}

// routedKV is a kv whose put is a generic tool (connectors.Router) routed
// by route, a function field.
type routedKV struct {
	*kv
	route func(tool string, args json.RawMessage) (connectors.Route, bool, error)
}

func (k *routedKV) Capabilities() connectors.Capabilities {
	c := k.kv.Capabilities()
	c.Router = k
	return c
}

func (k *routedKV) Route(tool string, args json.RawMessage) (connectors.Route, bool, error) {
	return k.route(tool, args)
}

// A connector's refusal of a pending call (its routing changed since the
// call paused) is shown to the person deciding it scrubbed of secrets and
// bounded, whatever the connector quotes.
func TestMethodShowsAConnectorsRefusalScrubbedAndBounded(t *testing.T) {
	k := &routedKV{kv: newKV("kv")}
	k.route = func(string, json.RawMessage) (connectors.Route, bool, error) { return connectors.Route{}, false, nil }
	e := newEnv(t, setup{noKV: true, extra: []catalog.Source{{Connector: k}}, scrubber: scrub.New("hunter2hunter2")})
	o := e.run(`async () => kv.put({ key: "k", value: "v" })`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	k.route = func(string, json.RawMessage) (connectors.Route, bool, error) {
		return connectors.Route{}, true, errors.New("excluded: token hunter2hunter2 " + strings.Repeat("x", 1<<20))
	}
	got := e.rt.Method("kv", "put", o.Pending[0].Args).ApprovalReason
	if !strings.HasPrefix(got, "kv refuses this call of put: excluded: token ") || strings.Contains(got, "hunter2hunter2") || len(got) > 4<<10 {
		t.Errorf("reason (%d bytes) = %.200q…; want the refusal, scrubbed and bounded", len(got), got)
	}
}
