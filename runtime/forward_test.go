package runtime_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// With forward_unknown, a method the server did not list when the
// catalog was made (it registers it later) is called by name: it needs
// approval, is logged, and replays after the approval without running
// again.
func TestForwardUnknownIsApprovedLoggedAndReplayed(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true, fxForward: true})
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "late" })`, nil), codemode.StatusCompleted)
	code := `async () => {
		const a = await fx.late({ x: 1 });
		const b = await fx.get_sum({ a: 1, b: 2 });
		return [a, b];
	}`
	o := e.run(code, nil)
	mustStatus(t, o, codemode.StatusPaused)
	want := []codemode.PendingAction{{ExecutionID: o.ExecutionID, Seq: 1, Connector: "fx", Method: "late", Args: []byte(`{"x":1}`)}}
	if diff := cmp.Diff(want, o.Pending); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if got := string(a.Result); got != `["I am late",3]` {
		t.Errorf("result %s", got)
	}
	if diff := cmp.Diff([]string{"1 fx.late applied", "2 fx.get_sum applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// no_approve lifts the approval of forwarded names it matches; a name the
// server does not have fails with the server's error, logged as an error;
// the check before running lets forwarded names through.
func TestForwardUnknownNoApproveAndMissingTools(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true, fxForward: true, fxNoApprove: []string{"late*"}})
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "later" })`, nil), codemode.StatusCompleted)
	o := e.run(`async () => await fx.later({})`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[string](t, o); got != "I am later" {
		t.Errorf("fx.later() = %q", got)
	}
	o = e.run(`async () => { try { await fx.latest_nothing({}) } catch (e) { return e.message } }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if msg := resultOf[string](t, o); !strings.Contains(msg, "latest_nothing") {
		t.Errorf("a tool the server lacks: %q", msg)
	}
	if diff := cmp.Diff([]string{"1 fx.latest_nothing error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// Without forward_unknown, the same call is refused before running.
func TestWithoutForwardUnknownUnlistedMethodsAreRefused(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true})
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "late" })`, nil), codemode.StatusCompleted)
	o := e.run(`async () => await fx.late({})`, nil)
	mustStatus(t, o, codemode.StatusError)
	if !strings.Contains(o.Error, "fx.late is not a method of fx") {
		t.Errorf("error %q", o.Error)
	}
}
