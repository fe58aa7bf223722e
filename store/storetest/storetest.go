// Package storetest holds the fixtures the tests of the stores share
// (NewExecution, NewEntry, SchemaVersion). Its own tests are the
// conformance suite of codemode.Store, run against every backend from one
// table (conformance_test.go): records read back as written, conditional
// updates (exactly one of racing deciders wins, from one handle or from
// several on one database, as a server and the command line share one),
// all-or-nothing log writes, retention, owners and the recovery of an
// execution whose owner is gone, snippets, the records of native
// connectors (connectors.Records) for a store that keeps them, and, for a
// store that has one, the write-ahead journal (codemode.Journaler).
package storetest

import (
	"encoding/json"
	"io/fs"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// SchemaVersion is the schema version a store's embedded migrations
// (fsys, holding migrations/*.sql) reach: the version it writes.
func SchemaVersion(t testing.TB, fsys fs.FS) int {
	t.Helper()
	ms, err := sqlstore.Migrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// NewExecution returns an execution with every field set (no owner), for
// a store's own tests.
func NewExecution(id string, status codemode.ExecStatus) *codemode.Execution {
	return &codemode.Execution{
		ID:         id,
		Code:       "async () => notes.listNotes({})",
		Status:     status,
		Result:     json.RawMessage(`{"ok":true}`),
		Error:      "",
		Logs:       []string{"hello", `{"a":1}`},
		Connectors: map[string]string{"notes": "sha256:abc"},
		Clock:      codemode.Clock{Seed: 42, Times: []int64{1700000000000, 1700000000001}},
		StartedBy:  alice,
	}
}

// alice is the person who starts the executions of NewExecution.
var alice = codemode.Person{Subject: "sub-alice", Name: "Alice", Email: "alice@example.com"}

// NewEntry returns a call entry of execution id, for a store's own tests.
func NewEntry(id string, seq int, state codemode.EntryState) codemode.Entry {
	return codemode.Entry{
		ExecutionID: id,
		Seq:         seq,
		Kind:        codemode.KindCall,
		Connector:   "notes",
		Method:      "createNote",
		Args:        json.RawMessage(`{"text":"hi"}`),
		State:       state,
	}
}
