package runtime_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// renamedConnector gives a connector another name by embedding it, as a
// wrapper that changes one thing of a connector is written.
type renamedConnector struct {
	connectors.Connector
	name string
}

func (r renamedConnector) Name() string { return r.name }

// A connector wrapped to change its name keeps everything it can do: its
// description, its native reverts and its disposals reach the runtime
// through the wrapper.
func TestAWrappedConnectorKeepsWhatItCanDo(t *testing.T) {
	k := newKV("kv")
	e := newEnv(t, setup{noKV: true, extra: []catalog.Source{{Connector: renamedConnector{Connector: k, name: "store"}}}})

	infos := e.rt.Connectors()
	if len(infos) != 1 {
		t.Fatalf("%d connectors, want 1", len(infos))
	}
	if infos[0].Name != "store" || infos[0].Description != "An in-memory key/value store for tests." {
		t.Errorf("connector %q described %q; want store with kv's description", infos[0].Name, infos[0].Description)
	}
	if got := e.rt.Method("store", "add", []byte(`{}`)); !got.Revertible {
		t.Errorf("Method(store, add) = %+v, want it revertible", got)
	}
	o := e.run(`async () => store.add({ key: "a", value: "1" })`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if n := k.disposals(o.ExecutionID); n != 1 {
		t.Errorf("disposals of the completed run = %d, want 1", n)
	}
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	mustStatus(t, r, codemode.StatusRolledBack)
	if diff := cmp.Diff([]string{"a"}, k.revertedKeys()); diff != "" {
		t.Errorf("reverted by kv (-want +got):\n%s", diff)
	}
}
