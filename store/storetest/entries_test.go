package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// ignoreStamps ignores the store-set timestamps of entries (they are checked
// separately).
var ignoreStamps = cmpopts.IgnoreFields(codemode.Entry{}, "CreatedAt", "UpdatedAt")

func testEntriesRoundTrip(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_e", codemode.StatusRunning))
	empty := entries(t, s, "exec_e")
	if len(empty) != 0 {
		t.Errorf("Entries of a new execution = %v, want none", empty)
	}
	want := []codemode.Entry{
		{ExecutionID: "exec_e", Seq: 1, Kind: codemode.KindCall, Connector: "notes", Method: "listNotes",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`{"notes":[]}`), State: codemode.EntryApplied},
		{ExecutionID: "exec_e", Seq: 2, Kind: codemode.KindStep, Connector: "codemode", Method: "step", Name: "pick",
			Result: json.RawMessage(`0.25`), State: codemode.EntryApplied},
		{ExecutionID: "exec_e", Seq: 3, Kind: codemode.KindCall, Connector: "files", Method: "read_file",
			Args: json.RawMessage(`{"path":"x"}`), Error: "ENOENT", State: codemode.EntryError},
		{ExecutionID: "exec_e", Seq: 4, Kind: codemode.KindCall, Connector: "notes", Method: "createNote",
			Args: json.RawMessage(`{"text":"` + string(bigJSON(1 << 20)[1:])), State: codemode.EntryPending},
		{ExecutionID: "exec_e", Seq: 5, Kind: codemode.KindService, Connector: "codemode", Method: "search",
			Args: json.RawMessage(`["notes"]`), Result: json.RawMessage(`{"results":[],"total":0}`), State: codemode.EntryApplied},
		{ExecutionID: "exec_e", Seq: 10, Kind: codemode.KindCall, Connector: "notes", Method: "deleteNote",
			Args: json.RawMessage(`{"id":"note_1"}`), State: codemode.EntryExecuting, CreatedAt: at(4)},
	}
	// Insert out of order: Entries sorts by seq.
	for _, i := range []int{5, 2, 0, 3, 4, 1} {
		if err := s.InsertEntry(ctx, want[i]); err != nil {
			t.Fatalf("InsertEntry #%d: %v", want[i].Seq, err)
		}
	}
	got := entries(t, s, "exec_e")
	if diff := cmp.Diff(want, got, ignoreStamps, rawAsString); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	for _, e := range got {
		if e.CreatedAt.IsZero() || e.UpdatedAt.IsZero() {
			t.Errorf("entry #%d timestamps not set: %v %v", e.Seq, e.CreatedAt, e.UpdatedAt)
		}
	}
	if !got[5].CreatedAt.Equal(at(4)) {
		t.Errorf("entry #10 CreatedAt = %v, want the caller's %v", got[4].CreatedAt, at(4))
	}
}

// testClippedEntries reads pages of a log with values whole, cut and
// left out; a cut is counted in characters, so a multi-byte character is
// never split, and sizes are in bytes.
func testClippedEntries(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_c", codemode.StatusRunning), NewExecution("exec_empty", codemode.StatusRunning))
	log := []codemode.Entry{
		{ExecutionID: "exec_c", Seq: 1, Kind: codemode.KindCall, Connector: "notes", Method: "createNote",
			Args: json.RawMessage(`{"text":"ééééé"}`), Result: bigJSON(100 << 10), State: codemode.EntryApplied},
		{ExecutionID: "exec_c", Seq: 2, Kind: codemode.KindStep, Connector: "codemode", Method: "step", Name: "pick",
			Result: json.RawMessage(`0.25`), State: codemode.EntryApplied},
		{ExecutionID: "exec_c", Seq: 3, Kind: codemode.KindCall, Connector: "files", Method: "read_file",
			Args: json.RawMessage(`{"path":"x"}`), Error: "ENOENT: no such file", State: codemode.EntryError},
		{ExecutionID: "exec_c", Seq: 10, Kind: codemode.KindCall, Connector: "notes", Method: "deleteNote",
			Args: json.RawMessage(`{"id":"note_1"}`), State: codemode.EntryPending},
	}
	must(t, s.WriteEntries(ctx, log, nil))
	full := entries(t, s, "exec_c")
	sizes := func(e codemode.Entry) codemode.EntrySizes {
		return codemode.EntrySizes{Args: len(e.Args), Result: len(e.Result), Error: len(e.Error)}
	}
	clip := func(v string, n int) string {
		if r := []rune(v); n >= 0 && len(r) > n {
			return string(r[:n])
		}
		return v
	}
	// want is the log from seq after, at most limit entries, as preview
	// cuts it.
	want := func(after, limit, preview int) []codemode.ClippedEntry {
		var out []codemode.ClippedEntry
		for _, e := range full {
			if e.Seq <= after || limit > 0 && len(out) == limit {
				continue
			}
			c := codemode.ClippedEntry{Entry: e, Sizes: sizes(e)}
			switch {
			case preview < 0:
				c.Args, c.Result, c.Error = nil, nil, ""
			case preview > 0:
				if c.Args != nil {
					c.Args = json.RawMessage(clip(string(c.Args), preview))
				}
				if c.Result != nil {
					c.Result = json.RawMessage(clip(string(c.Result), preview))
				}
				c.Error = clip(c.Error, preview)
			}
			out = append(out, c)
		}
		return out
	}
	for _, q := range []codemode.LogQuery{
		{},
		{Preview: 10},
		{Preview: 3},
		{Preview: -1},
		{After: 1, Limit: 2, Preview: 8},
		{After: 3},
		{After: 10},
		{Limit: 1, Preview: -1},
		// Past what a 32-bit parameter holds (PostgreSQL's substr and
		// seq take int4): a preview that long cuts nothing, no seq is
		// after such an After, every seq is after its negative.
		{Preview: math.MaxInt32 + 1},
		{Preview: math.MaxInt, Limit: math.MaxInt},
		{After: math.MaxInt32 + 1},
		{After: math.MinInt, Preview: 3},
	} {
		got, err := s.ClippedEntries(ctx, "exec_c", q)
		if err != nil {
			t.Fatalf("ClippedEntries(%+v): %v", q, err)
		}
		if diff := cmp.Diff(want(q.After, q.Limit, q.Preview), got, rawAsString); diff != "" {
			t.Errorf("ClippedEntries(%+v) (-want +got):\n%s", q, diff)
		}
		for _, c := range got {
			if whole := c.Sizes == sizes(c.Entry); c.Cut() == whole {
				t.Errorf("ClippedEntries(%+v): entry #%d Cut() = %v with sizes %+v", q, c.Seq, c.Cut(), c.Sizes)
			}
		}
	}
	// A cut value is the start of the value as logged: "ééé" of ééééé.
	got, err := s.ClippedEntries(ctx, "exec_c", codemode.LogQuery{Limit: 1, Preview: 12})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Args) != `{"text":"ééé` || !got[0].Cut() || got[0].Sizes.Args != len(`{"text":"ééééé"}`) {
		t.Errorf("entry #1 cut to 12 characters: args %q (Cut %v, size %d)", got[0].Args, got[0].Cut(), got[0].Sizes.Args)
	}
	if empty, err := s.ClippedEntries(ctx, "exec_empty", codemode.LogQuery{}); err != nil || len(empty) != 0 {
		t.Errorf("ClippedEntries of an execution with no log = %v, %v; want none", empty, err)
	}
	if _, err := s.ClippedEntries(ctx, "exec_none", codemode.LogQuery{}); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("ClippedEntries of an unknown execution: error %v, want ErrNotFound", err)
	}
}

func testInsertEntryErrors(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_i", codemode.StatusRunning))
	insert(t, s, NewEntry("exec_i", 1, codemode.EntryExecuting))
	badKind := NewEntry("exec_i", 3, codemode.EntryExecuting)
	badKind.Kind = 0
	tests := []struct {
		name string
		e    codemode.Entry
		is   error // nil: any error
	}{
		{"duplicate seq", NewEntry("exec_i", 1, codemode.EntryPending), codemode.ErrConflict},
		{"unknown execution", NewEntry("exec_none", 1, codemode.EntryPending), codemode.ErrNotFound},
		{"zero state", NewEntry("exec_i", 2, 0), nil},
		{"zero kind", badKind, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, "InsertEntry", s.InsertEntry(ctx, tt.e), tt.is)
		})
	}
	got := entries(t, s, "exec_i")
	if diff := cmp.Diff([]codemode.Entry{NewEntry("exec_i", 1, codemode.EntryExecuting)}, got, ignoreStamps); diff != "" {
		t.Errorf("log after failed inserts (-want +got):\n%s", diff)
	}
}

func testUpdateEntry(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_x", codemode.StatusRunning))
	e := NewEntry("exec_x", 1, codemode.EntryPending)
	e.CreatedAt = at(0)
	insert(t, s, e)
	steps := []struct {
		name   string
		from   codemode.EntryState
		to     codemode.EntryState
		result json.RawMessage
		errMsg string
		is     error // nil: success
	}{
		{"approve", codemode.EntryPending, codemode.EntryExecuting, nil, "", nil},
		{"stale approve", codemode.EntryPending, codemode.EntryExecuting, nil, "", codemode.ErrConflict},
		{"applied", codemode.EntryExecuting, codemode.EntryApplied, json.RawMessage(`{"id":"note_1"}`), "", nil},
		{"reverted", codemode.EntryApplied, codemode.EntryReverted, json.RawMessage(`{"id":"note_1"}`), "", nil},
		{"stale revert", codemode.EntryApplied, codemode.EntryReverted, nil, "", codemode.ErrConflict},
	}
	want := e
	for _, st := range steps {
		u := e
		u.State, u.Result, u.Error = st.to, st.result, st.errMsg
		err := s.UpdateEntry(ctx, u, st.from)
		if !errors.Is(err, st.is) || (st.is == nil && err != nil) {
			t.Fatalf("%s: UpdateEntry error = %v, want %v", st.name, err, st.is)
		}
		if err == nil {
			want.State, want.Result, want.Error = st.to, st.result, st.errMsg
		}
		got := entries(t, s, "exec_x")
		if diff := cmp.Diff([]codemode.Entry{want}, got, ignoreStamps); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", st.name, diff)
		}
		if !got[0].CreatedAt.Equal(at(0)) || !got[0].UpdatedAt.After(at(0)) {
			t.Errorf("%s: CreatedAt %v UpdatedAt %v, want created kept and updated later", st.name, got[0].CreatedAt, got[0].UpdatedAt)
		}
	}
	missing := NewEntry("exec_x", 2, codemode.EntryApplied)
	if err := s.UpdateEntry(ctx, missing, codemode.EntryExecuting); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("UpdateEntry of a missing entry: %v, want ErrNotFound", err)
	}
	bad := NewEntry("exec_x", 1, 0)
	if err := s.UpdateEntry(ctx, bad, codemode.EntryReverted); err == nil {
		t.Error("UpdateEntry to state 0 succeeded")
	}
}

func testUpdateEntryRecordsError(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_f", codemode.StatusRunning))
	e := NewEntry("exec_f", 1, codemode.EntryExecuting)
	insert(t, s, e)
	e.State, e.Error = codemode.EntryError, "connection refused"
	must(t, s.UpdateEntry(ctx, e, codemode.EntryExecuting))
	got := entries(t, s, "exec_f")
	if diff := cmp.Diff([]codemode.Entry{e}, got, ignoreStamps); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// testEntryTask logs a downstream task's id as a call moves executing ->
// waiting, in a batch and alone; an update without an id keeps it, and
// every read returns it.
func testEntryTask(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_t", codemode.StatusRunning))
	one, two := NewEntry("exec_t", 1, codemode.EntryExecuting), NewEntry("exec_t", 2, codemode.EntryExecuting)
	must(t, s.WriteEntries(ctx, []codemode.Entry{one}, nil))
	// In a batch with the insert of the next call, as a pass writes it.
	one.State, one.Task = codemode.EntryWaiting, "5f0c6e1e-task-1"
	must(t, s.WriteEntries(ctx, []codemode.Entry{two}, []codemode.EntryUpdate{{Entry: one, From: codemode.EntryExecuting}}))
	two.State, two.Task = codemode.EntryWaiting, "task-2"
	must(t, s.UpdateEntry(ctx, two, codemode.EntryExecuting))
	if diff := cmp.Diff([]codemode.Entry{one, two}, entries(t, s, "exec_t"), ignoreStamps); diff != "" {
		t.Errorf("log with waiting calls (-want +got):\n%s", diff)
	}
	// The task ended: its result is recorded by an update that does not
	// repeat the id.
	done := one
	done.State, done.Result, done.Task = codemode.EntryApplied, json.RawMessage(`{"ok":true}`), ""
	must(t, s.UpdateEntry(ctx, done, codemode.EntryWaiting))
	failed := two
	failed.State, failed.Error, failed.Task = codemode.EntryError, "the task failed", ""
	must(t, s.WriteEntries(ctx, nil, []codemode.EntryUpdate{{Entry: failed, From: codemode.EntryWaiting}}))
	done.Task, failed.Task = one.Task, two.Task
	if diff := cmp.Diff([]codemode.Entry{done, failed}, entries(t, s, "exec_t"), ignoreStamps); diff != "" {
		t.Errorf("log after the tasks ended (-want +got):\n%s", diff)
	}
	clipped, err := s.ClippedEntries(ctx, "exec_t", codemode.LogQuery{Preview: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(clipped) != 2 || clipped[0].Task != one.Task || clipped[1].Task != two.Task {
		t.Errorf("ClippedEntries tasks = %+v, want %q and %q", clipped, one.Task, two.Task)
	}
	// An entry inserted with its id keeps it.
	three := NewEntry("exec_t", 3, codemode.EntryWaiting)
	three.Task = "task-3"
	insert(t, s, three)
	if got := entries(t, s, "exec_t"); len(got) != 3 || got[2].Task != "task-3" {
		t.Errorf("inserted waiting entry = %+v, want task-3", got)
	}
}
