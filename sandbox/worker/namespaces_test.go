package worker

import (
	"context"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// namespaceGlobals: two connectors under mcp, one two levels down under
// github, one unavailable one in the mcp namespace and a whole namespace
// of unavailable ones.
var namespaceGlobals = []sandbox.Global{
	{Name: "mcp.a", Methods: []string{"get_sum"}},
	{Name: "notes", Methods: []string{"createNote"}},
	{Name: "mcp.b", Methods: []string{"echo", "get_sum"}},
	{Name: "github.pulls.reviews", Methods: []string{"list"}},
	{Name: "mcp.down", Unavailable: "start /opt/down: exit status 1"},
	{Name: "gone.x", Unavailable: "no such server"},
}

// TestNamespaces: dotted connector names are nested objects in both
// executors; calls name the whole dotted connector; misspelt members and
// unavailable connectors are TypeErrors that say what exists or why.
func TestNamespaces(t *testing.T) {
	for name, e := range bothExecutors(t) {
		t.Run(name, func(t *testing.T) {
			h := &sandboxtest.Host{}
			run := func(code string) sandbox.Outcome {
				t.Helper()
				o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: namespaceGlobals}, h)
				if err != nil {
					t.Fatalf("Run(%q): internal error: %v", code, err)
				}
				return o
			}
			code := `const [a, b, r] = await Promise.all([mcp.a.get_sum({ x: 1 }), mcp.b.echo({ y: 2 }), github.pulls.reviews.list({})]);
[a.seq, b.method, r.method, Object.keys(mcp), Object.keys(github.pulls), typeof mcp.then, 'a' in mcp]`
			sandboxtest.WantCompleted(t, code, run(code), `[1,"echo","list",["a","b"],["reviews"],"undefined",true]`)
			calls := h.Calls()
			got := make([]string, len(calls))
			for _, c := range calls {
				if c.Seq >= 1 && int(c.Seq) <= len(got) {
					got[c.Seq-1] = c.Connector + " " + c.Method
				}
			}
			if diff := cmp.Diff([]string{"mcp.a get_sum", "mcp.b echo", "github.pulls.reviews list"}, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}

			errs := []struct{ code, want string }{
				{"await mcp.c.get_sum({})", "TypeError: mcp.c is not a connector; did you mean a or b? (line 1:11)"},
				{"await mcp.b.get_summ({})", "TypeError: mcp.b.get_summ is not a function; did you mean get_sum? (line 1:13)"},
				{"await mcp.down.list({})", "TypeError: connector mcp.down is unavailable: start /opt/down: exit status 1 (line 1:11)"},
				{"await gone.x.list({})", "TypeError: connector gone.x is unavailable: no such server (line 1:12)"},
				{"await github.pull.reviews.list({})", "TypeError: github.pull is not a connector; did you mean pulls? (line 1:14)"},
				{"await mpc.a.get_sum({})", "ReferenceError: mpc is not defined (line 1:7); did you mean mcp? Available globals: mcp, gone, notes, github, codemode"},
			}
			for _, tc := range errs {
				o := run(tc.code)
				if o.Status != sandbox.Failed || o.Error != tc.want {
					t.Errorf("%s:\n got %v %q\nwant %q", tc.code, o.Status, o.Error, tc.want)
				}
			}
		})
	}
}
