package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// ignoreStamps ignores the store-set timestamps of entries (they are checked
// separately).
var ignoreStamps = cmpopts.IgnoreFields(runtime.Entry{}, "CreatedAt", "UpdatedAt")

func TestEntriesRoundTrip(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateExecution(ctx, newExecution("exec_e", runtime.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	empty, err := s.Entries(ctx, "exec_e")
	if err != nil {
		t.Fatal(err)
	}
	if len(empty) != 0 {
		t.Errorf("Entries of a new execution = %v, want none", empty)
	}
	want := []runtime.Entry{
		{ExecutionID: "exec_e", Seq: 1, Kind: runtime.KindCall, Connector: "notes", Method: "listNotes",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`{"notes":[]}`), State: runtime.EntryApplied},
		{ExecutionID: "exec_e", Seq: 2, Kind: runtime.KindStep, Connector: "codemode", Method: "step", Name: "pick",
			Result: json.RawMessage(`0.25`), State: runtime.EntryApplied},
		{ExecutionID: "exec_e", Seq: 3, Kind: runtime.KindCall, Connector: "files", Method: "read_file",
			Args: json.RawMessage(`{"path":"x"}`), Error: "ENOENT", State: runtime.EntryError},
		{ExecutionID: "exec_e", Seq: 4, Kind: runtime.KindCall, Connector: "notes", Method: "createNote",
			Args: json.RawMessage(`{"text":"` + string(bigJSON(1 << 20)[1:])), State: runtime.EntryPending},
		{ExecutionID: "exec_e", Seq: 10, Kind: runtime.KindCall, Connector: "notes", Method: "deleteNote",
			Args: json.RawMessage(`{"id":"note_1"}`), State: runtime.EntryExecuting, CreatedAt: at(4)},
	}
	// Insert out of order: Entries sorts by seq.
	for _, i := range []int{4, 2, 0, 3, 1} {
		if err := s.InsertEntry(ctx, want[i]); err != nil {
			t.Fatalf("InsertEntry #%d: %v", want[i].Seq, err)
		}
	}
	got, err := s.Entries(ctx, "exec_e")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreStamps, rawAsString); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	for _, e := range got {
		if e.CreatedAt.IsZero() || e.UpdatedAt.IsZero() {
			t.Errorf("entry #%d timestamps not set: %v %v", e.Seq, e.CreatedAt, e.UpdatedAt)
		}
	}
	if !got[4].CreatedAt.Equal(at(4)) {
		t.Errorf("entry #10 CreatedAt = %v, want the caller's %v", got[4].CreatedAt, at(4))
	}
}

func TestEntriesUnknownExecution(t *testing.T) {
	s := openTemp(t)
	if _, err := s.Entries(context.Background(), "exec_none"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Entries error = %v, want ErrNotFound", err)
	}
}

func TestInsertEntryErrors(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateExecution(ctx, newExecution("exec_i", runtime.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertEntry(ctx, newEntry("exec_i", 1, runtime.EntryExecuting)); err != nil {
		t.Fatal(err)
	}
	badKind := newEntry("exec_i", 3, runtime.EntryExecuting)
	badKind.Kind = 0
	tests := []struct {
		name string
		e    runtime.Entry
		is   error // nil: any error
	}{
		{"duplicate seq", newEntry("exec_i", 1, runtime.EntryPending), runtime.ErrConflict},
		{"unknown execution", newEntry("exec_none", 1, runtime.EntryPending), runtime.ErrNotFound},
		{"zero state", newEntry("exec_i", 2, 0), nil},
		{"zero kind", badKind, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.InsertEntry(ctx, tt.e)
			if err == nil {
				t.Fatal("InsertEntry succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error = %v, want %v", err, tt.is)
			}
		})
	}
	got, err := s.Entries(ctx, "exec_i")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]runtime.Entry{newEntry("exec_i", 1, runtime.EntryExecuting)}, got, ignoreStamps); diff != "" {
		t.Errorf("log after failed inserts (-want +got):\n%s", diff)
	}
}

func TestUpdateEntry(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateExecution(ctx, newExecution("exec_x", runtime.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	e := newEntry("exec_x", 1, runtime.EntryPending)
	e.CreatedAt = at(0)
	if err := s.InsertEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		from   runtime.EntryState
		to     runtime.EntryState
		result json.RawMessage
		errMsg string
		is     error // nil: success
	}{
		{"approve", runtime.EntryPending, runtime.EntryExecuting, nil, "", nil},
		{"stale approve", runtime.EntryPending, runtime.EntryExecuting, nil, "", runtime.ErrConflict},
		{"applied", runtime.EntryExecuting, runtime.EntryApplied, json.RawMessage(`{"id":"note_1"}`), "", nil},
		{"reverted", runtime.EntryApplied, runtime.EntryReverted, json.RawMessage(`{"id":"note_1"}`), "", nil},
		{"stale revert", runtime.EntryApplied, runtime.EntryReverted, nil, "", runtime.ErrConflict},
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
		got, err := s.Entries(ctx, "exec_x")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]runtime.Entry{want}, got, ignoreStamps); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", st.name, diff)
		}
		if !got[0].CreatedAt.Equal(at(0)) || !got[0].UpdatedAt.After(at(0)) {
			t.Errorf("%s: CreatedAt %v UpdatedAt %v, want created kept and updated later", st.name, got[0].CreatedAt, got[0].UpdatedAt)
		}
	}
	missing := newEntry("exec_x", 2, runtime.EntryApplied)
	if err := s.UpdateEntry(ctx, missing, runtime.EntryExecuting); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("UpdateEntry of a missing entry: %v, want ErrNotFound", err)
	}
	bad := newEntry("exec_x", 1, 0)
	if err := s.UpdateEntry(ctx, bad, runtime.EntryReverted); err == nil {
		t.Error("UpdateEntry to state 0 succeeded")
	}
}

func TestUpdateEntryRecordsError(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateExecution(ctx, newExecution("exec_f", runtime.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	e := newEntry("exec_f", 1, runtime.EntryExecuting)
	if err := s.InsertEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	e.State, e.Error = runtime.EntryError, "connection refused"
	if err := s.UpdateEntry(ctx, e, runtime.EntryExecuting); err != nil {
		t.Fatal(err)
	}
	got, err := s.Entries(ctx, "exec_f")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]runtime.Entry{e}, got, ignoreStamps); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
