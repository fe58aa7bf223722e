package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// moved returns entry seq of exec_w (as batchLog has it) moved to state
// with result and error.
func moved(seq int, from, to codemode.EntryState, result, errMsg string) codemode.EntryUpdate {
	e := NewEntry("exec_w", seq, to)
	if result != "" {
		e.Result = json.RawMessage(result)
	}
	e.Error = errMsg
	return codemode.EntryUpdate{Entry: e, From: from}
}

// batchLog is the log each WriteEntries case starts from.
func batchLog() []codemode.Entry {
	return []codemode.Entry{
		NewEntry("exec_w", 1, codemode.EntryExecuting),
		NewEntry("exec_w", 2, codemode.EntryExecuting),
		NewEntry("exec_w", 3, codemode.EntryPending),
	}
}

// WriteEntries writes its inserts and updates all together or not at all,
// with the errors of InsertEntry and UpdateEntry.
func testWriteEntries(t *testing.T, f Factory) {
	// executing is new entries of id, executing, one per seq.
	executing := func(id string, seqs ...int) []codemode.Entry {
		var out []codemode.Entry
		for _, seq := range seqs {
			out = append(out, NewEntry(id, seq, codemode.EntryExecuting))
		}
		return out
	}
	badKind := executing("exec_w", 4)
	badKind[0].Kind = 0
	start := batchLog()
	// after applies inserts and updates to the starting log.
	after := func(updates []codemode.EntryUpdate, ins []codemode.Entry) []codemode.Entry {
		log := batchLog()
		for _, u := range updates {
			log[u.Entry.Seq-1] = u.Entry
		}
		return append(log, ins...)
	}
	applied := executing("exec_w", 4, 5)
	applied[1].State, applied[1].Result = codemode.EntryApplied, json.RawMessage(`{"ok":true}`)
	all := []codemode.EntryUpdate{
		moved(1, codemode.EntryExecuting, codemode.EntryApplied, `{"id":"note_1"}`, ""),
		moved(2, codemode.EntryExecuting, codemode.EntryError, "", "boom"),
		moved(3, codemode.EntryPending, codemode.EntryExecuting, "", ""),
	}
	tests := []struct {
		name    string
		updates []codemode.EntryUpdate
		insert  []codemode.Entry
		is      error // nil: success, or any error when fails is set
		fails   bool
	}{
		{name: "nothing"},
		{name: "updates and insert", updates: all, insert: executing("exec_w", 4)},
		{name: "updates only", updates: all},
		{name: "insert only", insert: executing("exec_w", 4)},
		{name: "one update", updates: all[:1]},
		{name: "one update and insert", updates: all[:1], insert: executing("exec_w", 4)},
		{name: "inserts only, one in its final state", insert: applied},
		{name: "updates and inserts", updates: all, insert: applied},
		{name: "second insert of an existing seq", updates: all, insert: executing("exec_w", 4, 1), is: codemode.ErrConflict, fails: true},
		{name: "two inserts of one seq", insert: executing("exec_w", 4, 4), is: codemode.ErrConflict, fails: true},
		{name: "conflict in the middle", updates: []codemode.EntryUpdate{
			all[0],
			moved(2, codemode.EntryPending, codemode.EntryExecuting, "", ""),
			all[2],
		}, insert: executing("exec_w", 4), is: codemode.ErrConflict, fails: true},
		{name: "missing entry", updates: []codemode.EntryUpdate{
			all[0],
			moved(9, codemode.EntryExecuting, codemode.EntryApplied, "1", ""),
		}, insert: executing("exec_w", 4), is: codemode.ErrNotFound, fails: true},
		{name: "insert of an existing seq", updates: all, insert: executing("exec_w", 2), is: codemode.ErrConflict, fails: true},
		{name: "insert into an unknown execution", updates: all, insert: executing("exec_none", 1), is: codemode.ErrNotFound, fails: true},
		{name: "lone insert of an existing seq", insert: executing("exec_w", 1), is: codemode.ErrConflict, fails: true},
		{name: "lone stale update", updates: []codemode.EntryUpdate{moved(3, codemode.EntryExecuting, codemode.EntryApplied, "1", "")},
			is: codemode.ErrConflict, fails: true},
		{name: "invalid state", updates: []codemode.EntryUpdate{all[0], moved(2, codemode.EntryExecuting, 0, "", "")},
			insert: executing("exec_w", 4), fails: true},
		{name: "invalid insert", updates: all, insert: badKind, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := f.New(t)
			ctx := context.Background()
			create(t, s, NewExecution("exec_w", codemode.StatusRunning))
			insert(t, s, start...)
			err := s.WriteEntries(ctx, tt.insert, tt.updates)
			want := start // all or nothing
			if tt.fails {
				wantError(t, "WriteEntries", err, tt.is)
			} else {
				must(t, err)
				want = after(tt.updates, tt.insert)
			}
			if diff := cmp.Diff(want, entries(t, s, "exec_w"), ignoreStamps, rawAsString); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			// Whatever happened, the next transaction of the store works
			// (a failed one was rolled back, not left open).
			create(t, s, NewExecution("exec_next", codemode.StatusRunning))
			first := NewEntry("exec_next", 1, codemode.EntryExecuting)
			insert(t, s, first)
			done := first
			done.State = codemode.EntryApplied
			if err := s.WriteEntries(ctx, executing("exec_next", 2), []codemode.EntryUpdate{{Entry: done, From: codemode.EntryExecuting}}); err != nil {
				t.Fatalf("the next WriteEntries: %v", err)
			}
		})
	}
}

// Two handles on one database racing the same batch (approve a pending entry,
// log the next one): exactly one wins, and the loser leaves no trace.
func testWriteEntriesRace(t *testing.T, f Factory) {
	stores := handles(t, f, 2)
	ctx := context.Background()
	create(t, stores[0], NewExecution("exec_w", codemode.StatusRunning))
	const rounds = 20
	for seq := 1; seq <= 2*rounds; seq += 2 {
		insert(t, stores[0], NewEntry("exec_w", seq, codemode.EntryPending))
		winner := race(t, fmt.Sprintf("seq %d", seq), len(stores), func(i int) (bool, error) {
			approve := moved(seq, codemode.EntryPending, codemode.EntryExecuting, "", "")
			next := NewEntry("exec_w", seq+1, codemode.EntryExecuting)
			next.Method = string(rune('A' + i))
			return conditional(stores[i].WriteEntries(ctx, []codemode.Entry{next}, []codemode.EntryUpdate{approve}))
		})
		log := entries(t, stores[1], "exec_w")
		if got := log[len(log)-1]; got.Seq != seq+1 || got.Method != string(rune('A'+winner)) {
			t.Fatalf("seq %d: last entry %d by %q, want %d by the winner %q", seq, got.Seq, got.Method, seq+1, string(rune('A'+winner)))
		}
	}
}
