package storetest

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/codec"
)

// SchemaVersion is the schema version a store's embedded migrations
// (fsys, holding migrations/*.sql) reach: the version it writes.
func SchemaVersion(t testing.TB, fsys fs.FS) int {
	t.Helper()
	ms, err := codec.Migrations(fsys)
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

// alice and bob are the people of the suite's runs and decisions.
var (
	alice = codemode.Person{Subject: "sub-alice", Name: "Alice", Email: "alice@example.com"}
	bob   = codemode.Person{Subject: "sub-bob", Name: "Bob"}
)

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

// at returns a fixed instant plus n seconds.
func at(n int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, n, 123456789, time.UTC)
}

// bigJSON is a JSON string of about n bytes.
func bigJSON(n int) json.RawMessage {
	return json.RawMessage(`"` + strings.Repeat("x", n) + `"`)
}

// rawAsString compares raw JSON as text: readable diffs, and fast on the
// 1 MB values (element-wise byte comparison takes seconds under -race).
var rawAsString = cmp.Transformer("string", func(r json.RawMessage) string { return string(r) })
