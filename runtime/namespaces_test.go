package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// TestNamespaces: connectors named ns.a and ns.b are ns.a and ns.b in
// programs; their calls are logged under the dotted names, pause for
// approval and replay; declarations declare one ns object; describe and
// types take dotted paths.
func TestNamespaces(t *testing.T) {
	a, b := newKV("ns.a"), newKV("ns.b")
	e := newEnv(t, setup{mcp: true, extra: []catalog.Source{{Connector: a}, {Connector: b}}})
	o := e.run(`async () => {
		await ns.a.add({ key: "k", value: "1" });
		const prev = await ns.b.put({ key: "k", value: "2" });
		return [(await ns.a.get({ key: "k" })).value, prev.previous];
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	if p := o.Pending[0]; p.Connector != "ns.b" || p.Method != "put" {
		t.Fatalf("pending %+v, want ns.b.put", p)
	}
	o = e.approve(o.ExecutionID, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[[]any](t, o); !cmp.Equal(got, []any{"1", nil}) {
		t.Errorf("result %v", got)
	}
	if diff := cmp.Diff([]string{"1 ns.a.add applied", "2 ns.b.put applied", "3 ns.a.get applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	// The replay did not call ns.a.add again.
	a.mu.Lock()
	b.mu.Lock()
	if a.calls["add"] != 1 || b.calls["put"] != 1 {
		t.Errorf("calls: ns.a %v, ns.b %v", a.calls, b.calls)
	}
	b.mu.Unlock()
	a.mu.Unlock()

	all, err := e.rt.Declarations("")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(all, "declare const ns:"); n != 1 {
		t.Errorf("declare const ns appears %d times:\n%s", n, all)
	}
	for _, want := range []string{"  a: {\n", "  b: {\n", "    put(input: NsBPutInput): Promise<unknown>;"} {
		if !strings.Contains(all, want) {
			t.Errorf("declarations lack %q:\n%s", want, all)
		}
	}
	ns, err := e.rt.Declarations("ns")
	if err != nil || !strings.HasPrefix(ns[strings.Index(ns, "declare const"):], "declare const ns: {\n  /** An in-memory") || strings.Contains(ns, "declare const kv") {
		t.Errorf("Declarations(ns) = %v\n%s", err, ns)
	}
	one, err := e.rt.Declarations("ns.b")
	if err != nil || !strings.Contains(one, "declare const ns: {") || strings.Contains(one, "NsAGetInput") {
		t.Errorf("Declarations(ns.b) = %v\n%s", err, one)
	}

	for path, want := range map[string]string{
		"ns.b":     `"kind":"connector"`,
		"ns.b.put": `"kind":"method"`,
	} {
		raw, err := runtime.Describe(e.ctx, e.rt, path)
		if err != nil || !strings.Contains(string(raw), want) {
			t.Errorf("Describe(%s) = %v %s", path, err, raw)
		}
	}
	raw, _ := runtime.Describe(e.ctx, e.rt, "ns.b.put")
	var d struct{ Types string }
	_ = json.Unmarshal(raw, &d)
	if !strings.Contains(d.Types, "declare const ns: {\n  b: {\n") || !strings.Contains(d.Types, "    put(input: NsBPutInput): Promise<unknown>;") {
		t.Errorf("describe ns.b.put types:\n%s", d.Types)
	}
	if _, err := runtime.Describe(e.ctx, e.rt, "ns.c.put"); err == nil || !strings.Contains(err.Error(), "ns.b.put") {
		t.Errorf("Describe(ns.c.put) = %v, want the nearest paths", err)
	}
}

func TestNamespaceClashIsRefused(t *testing.T) {
	e := newEnv(t, setup{})
	for _, sources := range [][]catalog.Source{
		{{Connector: newKV("ns")}, {Connector: newKV("ns.a")}},
		{{Connector: newKV("ns.a.b")}, {Connector: newKV("ns.a")}},
	} {
		_, err := runtime.New(e.ctx, runtime.Options{Store: e.store, Executor: e.exec, Sources: sources})
		if err == nil || !strings.Contains(err.Error(), "cannot also be the namespace of connector") {
			t.Errorf("err = %v", err)
		}
	}
}
