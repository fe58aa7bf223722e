package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// infoOf returns what Connectors says of connector name.
func infoOf(t *testing.T, rt *runtime.Runtime, name string) codemode.ConnectorInfo {
	t.Helper()
	for _, c := range rt.Connectors() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Connectors() has no %s", name)
	return codemode.ConnectorInfo{}
}

// A connector that was unavailable (its stand-in's tools fail) is replaced
// by one that works: its tools and global appear, the source's configured
// approval globs apply to them, and programs call it.
func TestReplaceConnectorBringsAnUnavailableOneIn(t *testing.T) {
	e := newEnv(t, setup{extra: []runtime.Source{{Connector: broken{}, Approve: []string{"ad*"}}}})
	if info := infoOf(t, e.rt, "broken"); info.Error == "" || len(info.Tools) != 0 {
		t.Fatalf("before: %+v; want an error and no tools", info)
	}
	before := e.run(`async () => await broken.get({ key: "a" })`, nil)
	mustStatus(t, before, codemode.StatusError)
	if !strings.Contains(before.Error, "broken is not defined") {
		t.Fatalf("before: error %q, want a ReferenceError", before.Error)
	}

	late := newKV("broken")
	if err := e.rt.ReplaceConnector(e.ctx, "broken", late); err != nil {
		t.Fatalf("ReplaceConnector: %v", err)
	}
	info := infoOf(t, e.rt, "broken")
	approval := map[string]bool{}
	for _, tl := range info.Tools {
		approval[tl.Name] = tl.RequiresApproval
	}
	want := map[string]bool{"get": false, "put": true, "add": true, "fail": false, "noop": false}
	if diff := cmp.Diff(want, approval); diff != "" || info.Error != "" {
		t.Fatalf("after: error %q, approval (-want +got):\n%s", info.Error, diff)
	}

	mustStatus(t, e.run(`async () => await broken.get({ key: "a" })`, nil), codemode.StatusCompleted)
	mustStatus(t, e.run(`async () => await broken.add({ key: "a", value: "1" })`, nil), codemode.StatusPaused)
	if n := late.count("get"); n != 1 {
		t.Fatalf("the new connector served %d get calls, want 1", n)
	}
	if decls, err := e.rt.Declarations("broken"); err != nil || !strings.Contains(decls, "get(") {
		t.Fatalf("declarations of the new connector lack get (err %v):\n%s", err, decls)
	}
}

// A pass that began before the replacement keeps its catalog: the
// connector's global is still absent in it; the next pass has it.
func TestReplaceConnectorKeepsRunningPasses(t *testing.T) {
	gate := newKV("gate")
	entered, release := make(chan struct{}), make(chan struct{})
	gate.hook = func(ctx context.Context, tool string) error {
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	e := newEnv(t, setup{noKV: true, extra: []runtime.Source{{Connector: gate}, {Connector: broken{}}}})
	type result struct {
		o   codemode.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := e.rt.Execute(e.ctx, `async () => { await gate.noop({}); return typeof broken }`, nil)
		done <- result{o, err}
	}()
	<-entered
	err := e.rt.ReplaceConnector(e.ctx, "broken", newKV("broken"))
	close(release)
	r := <-done
	if err != nil {
		t.Fatalf("ReplaceConnector: %v", err)
	}
	if r.err != nil {
		t.Fatalf("Execute: %v", r.err)
	}
	mustStatus(t, r.o, codemode.StatusCompleted)
	if got := resultOf[string](t, r.o); got != "undefined" {
		t.Fatalf("typeof broken in the running pass = %q, want undefined", got)
	}
	if got := resultOf[string](t, e.run(`async () => typeof broken`, nil)); got != "object" {
		t.Fatalf("typeof broken in a later pass = %q, want object", got)
	}
}

// A replacement that cannot take place leaves the catalog as it was.
func TestReplaceConnectorRefused(t *testing.T) {
	tests := []struct {
		name    string
		target  string
		conn    connectors.Connector
		wantErr string
	}{
		{"unknown connector", "nope", newKV("nope"), `unknown connector "nope"`},
		{"other name", "broken", newKV("kv2"), `named "kv2"`},
		{"nil connector", "broken", nil, "nil connector"},
		{"tools fail", "broken", broken{}, "server did not start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{extra: []runtime.Source{{Connector: broken{}}}})
			before := e.rt.Connectors()
			err := e.rt.ReplaceConnector(e.ctx, tt.target, tt.conn)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ReplaceConnector = %v; want an error containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(before, e.rt.Connectors()); diff != "" {
				t.Fatalf("the catalog changed (-before +after):\n%s", diff)
			}
		})
	}
}
