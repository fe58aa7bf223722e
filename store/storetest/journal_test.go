package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// journaler returns s's journal; Run only runs these checks for a store
// that has one.
func journaler(t *testing.T, s codemode.Store) codemode.Journaler {
	t.Helper()
	j, ok := s.(codemode.Journaler)
	if !ok {
		t.Fatalf("%T is not a codemode.Journaler", s)
	}
	return j
}

// withState returns e in state with result.
func withState(e codemode.Entry, state codemode.EntryState, result string) codemode.Entry {
	e.State = state
	if result != "" {
		e.Result = json.RawMessage(result)
	}
	return e
}

// journalRun creates execution id running for own_dead with entry 1
// committed executing.
func journalRun(t *testing.T, s codemode.Store, id string) {
	t.Helper()
	e := NewExecution(id, codemode.StatusRunning)
	e.Owner = "own_dead"
	create(t, s, e)
	insert(t, s, NewEntry(id, 1, codemode.EntryExecuting))
}

// recoverRun recovers execution id of own_dead.
func recoverRun(t *testing.T, s codemode.Store, id string) {
	t.Helper()
	must(t, s.RecoverExecution(context.Background(), interruption(id), codemode.StatusRunning, "own_dead", unknownNote))
}

// Journaled entries are not visible; recovery applies them: an entry the
// log lacks is added, one it holds executing takes the journaled state (a
// later record of a seq supersedes an earlier one), and what is still
// executing then becomes unknown.
func testJournalApplied(t *testing.T, f Factory) {
	s := f.New(t)
	j := journaler(t, s)
	ctx := context.Background()
	journalRun(t, s, "exec_j")
	e1, e2, e3 := NewEntry("exec_j", 1, codemode.EntryExecuting), NewEntry("exec_j", 2, codemode.EntryExecuting), NewEntry("exec_j", 3, codemode.EntryExecuting)
	must(t, j.Journal(ctx, "exec_j", []codemode.Entry{withState(e1, codemode.EntryApplied, `{"r":1}`), e2, e3}))
	must(t, j.Journal(ctx, "exec_j", []codemode.Entry{withState(e3, codemode.EntryApplied, `{"r":3}`)}))
	if diff := cmp.Diff([]codemode.Entry{e1}, entries(t, s, "exec_j"), ignoreStamps); diff != "" {
		t.Errorf("log before recovery: journaled entries are not visible (-want +got):\n%s", diff)
	}
	recoverRun(t, s, "exec_j")
	unknown := withState(e2, codemode.EntryUnknown, "")
	unknown.Error = unknownNote
	want := []codemode.Entry{withState(e1, codemode.EntryApplied, `{"r":1}`), unknown, withState(e3, codemode.EntryApplied, `{"r":3}`)}
	if diff := cmp.Diff(want, entries(t, s, "exec_j"), ignoreStamps, rawAsString); diff != "" {
		t.Errorf("log after recovery (-want +got):\n%s", diff)
	}
}

// A journal only adds: an entry the log holds in a state other than
// executing keeps it, whatever the journal says.
func testJournalNeverUndoes(t *testing.T, f Factory) {
	s := f.New(t)
	j := journaler(t, s)
	ctx := context.Background()
	journalRun(t, s, "exec_j")
	e1 := NewEntry("exec_j", 1, codemode.EntryExecuting)
	committed := withState(e1, codemode.EntryApplied, `{"committed":true}`)
	must(t, s.UpdateEntry(ctx, committed, codemode.EntryExecuting))
	stale := withState(e1, codemode.EntryError, "")
	stale.Error = "stale"
	must(t, j.Journal(ctx, "exec_j", []codemode.Entry{e1, stale}))
	recoverRun(t, s, "exec_j")
	if diff := cmp.Diff([]codemode.Entry{committed}, entries(t, s, "exec_j"), ignoreStamps, rawAsString); diff != "" {
		t.Errorf("log after recovery (-want +got):\n%s", diff)
	}
}

// A dropped journal is gone; the next one of the execution starts empty.
func testDropJournal(t *testing.T, f Factory) {
	s := f.New(t)
	j := journaler(t, s)
	ctx := context.Background()
	journalRun(t, s, "exec_j")
	if err := j.DropJournal(ctx, "exec_j"); err != nil {
		t.Errorf("DropJournal without a journal: %v", err)
	}
	must(t, j.Journal(ctx, "exec_j", []codemode.Entry{NewEntry("exec_j", 2, codemode.EntryExecuting)}))
	must(t, j.DropJournal(ctx, "exec_j"))
	e3 := NewEntry("exec_j", 3, codemode.EntryExecuting)
	must(t, j.Journal(ctx, "exec_j", []codemode.Entry{withState(e3, codemode.EntryApplied, `3`)}))
	recoverRun(t, s, "exec_j")
	unknown := withState(NewEntry("exec_j", 1, codemode.EntryExecuting), codemode.EntryUnknown, "")
	unknown.Error = unknownNote
	want := []codemode.Entry{unknown, withState(e3, codemode.EntryApplied, `3`)}
	if diff := cmp.Diff(want, entries(t, s, "exec_j"), ignoreStamps, rawAsString); diff != "" {
		t.Errorf("log after recovery (-want +got):\n%s", diff)
	}
	// Recovery removed the journal: a new one starts empty.
	if err := j.DropJournal(ctx, "exec_j"); err != nil {
		t.Errorf("DropJournal after recovery: %v", err)
	}
}

// The process that recovers is not the one that journaled: another handle
// applies the journal, and several executions journal at once.
func testJournalOfAnotherHandle(t *testing.T, f Factory) {
	s := f.New(t)
	other := f.Another(t, s)
	j := journaler(t, s)
	ctx := context.Background()
	const runs, calls = 4, 50
	ids := make([]string, runs)
	done := make(chan error, runs)
	for r := range runs {
		ids[r] = "exec_" + string(rune('a'+r))
		journalRun(t, s, ids[r])
		go func() {
			for seq := 2; seq <= calls; seq++ {
				e := NewEntry(ids[r], seq, codemode.EntryExecuting)
				if err := j.Journal(ctx, ids[r], []codemode.Entry{e}); err != nil {
					done <- err
					return
				}
				if err := j.Journal(ctx, ids[r], []codemode.Entry{withState(e, codemode.EntryApplied, `true`)}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range runs {
		must(t, <-done)
	}
	for _, id := range ids {
		recoverRun(t, other, id)
		log := entries(t, s, id)
		if len(log) != calls {
			t.Fatalf("%s: %d entries after recovery, want %d", id, len(log), calls)
		}
		for _, e := range log[1:] {
			if e.State != codemode.EntryApplied || string(e.Result) != "true" {
				t.Fatalf("%s: entry %d is %s %s, want applied true", id, e.Seq, e.State, e.Result)
			}
		}
	}
}

func testJournalErrors(t *testing.T, f Factory) {
	s := f.New(t)
	j := journaler(t, s)
	ctx := context.Background()
	journalRun(t, s, "exec_j")
	if err := j.Journal(ctx, "exec_j", []codemode.Entry{NewEntry("exec_other", 2, codemode.EntryExecuting)}); err == nil {
		t.Error("journaling another execution's entry succeeded")
	}
	bad := NewEntry("exec_j", 2, 0)
	if err := j.Journal(ctx, "exec_j", []codemode.Entry{bad}); err == nil {
		t.Error("journaling an entry without a state succeeded")
	}
	waiting := NewEntry("exec_j", 3, codemode.EntryWaiting)
	waiting.Task = "task-3"
	if err := j.Journal(ctx, "exec_j", []codemode.Entry{waiting}); err == nil {
		t.Error("journaling a downstream task's id succeeded; it must be committed")
	}
	if err := j.Journal(ctx, "exec_j", nil); err != nil {
		t.Errorf("journaling nothing: %v", err)
	}
}
