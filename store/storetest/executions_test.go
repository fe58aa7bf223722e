package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func testExecutionRoundTrip(t *testing.T, f Factory) {
	tests := []struct {
		name string
		e    *codemode.Execution
	}{
		{"minimal", &codemode.Execution{ID: "exec_min", Code: "1", Status: codemode.StatusRunning}},
		{"full", NewExecution("exec_full", codemode.StatusPaused)},
		{"error", &codemode.Execution{ID: "exec_err", Code: "x", Status: codemode.StatusError, Error: "ReferenceError: x is not defined at 1:1"}},
		{"1 MB result", &codemode.Execution{ID: "exec_big", Code: "big", Status: codemode.StatusCompleted, Result: bigJSON(1 << 20)}},
		{"caller's CreatedAt", &codemode.Execution{ID: "exec_at", Code: "1", Status: codemode.StatusRunning, CreatedAt: at(3)}},
		{"null result", &codemode.Execution{ID: "exec_null", Code: "null", Status: codemode.StatusCompleted, Result: json.RawMessage("null")}},
		{"task", &codemode.Execution{ID: "exec_task", Code: "1", Status: codemode.StatusRunning, Task: &codemode.Task{TTL: 90 * time.Minute}}},
		{"task without a TTL", &codemode.Execution{ID: "exec_task0", Code: "1", Status: codemode.StatusRunning, Task: &codemode.Task{}}},
		{"cancelled", &codemode.Execution{ID: "exec_cancelled", Code: "1", Status: codemode.StatusCancelled, Error: "cancelled by the client", Task: &codemode.Task{TTL: time.Hour}}},
		{"traced", &codemode.Execution{ID: "exec_traced", Code: "1", Status: codemode.StatusRunning, Trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
	}
	s := f.New(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			explicit := tt.e.CreatedAt
			before := time.Now()
			create(t, s, tt.e)
			if !explicit.IsZero() && !tt.e.CreatedAt.Equal(explicit) {
				t.Errorf("CreatedAt = %v, want the caller's %v", tt.e.CreatedAt, explicit)
			}
			if explicit.IsZero() && tt.e.CreatedAt.Before(before.Add(-time.Second)) {
				t.Errorf("CreatedAt = %v, want about now", tt.e.CreatedAt)
			}
			if !tt.e.UpdatedAt.Equal(tt.e.CreatedAt) {
				t.Errorf("UpdatedAt = %v, want CreatedAt %v", tt.e.UpdatedAt, tt.e.CreatedAt)
			}
			got := execution(t, s, tt.e.ID)
			if diff := cmp.Diff(tt.e, got, rawAsString); diff != "" {
				t.Errorf("GetExecution (-want +got):\n%s", diff)
			}
		})
	}
}

func testCreateExecutionErrors(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	create(t, s, NewExecution("exec_1", codemode.StatusRunning))
	tests := []struct {
		name string
		e    *codemode.Execution
		is   error // nil: any error
	}{
		{"duplicate id", NewExecution("exec_1", codemode.StatusRunning), codemode.ErrConflict},
		{"empty id", NewExecution("", codemode.StatusRunning), nil},
		{"zero status", NewExecution("exec_2", 0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, "CreateExecution", s.CreateExecution(ctx, tt.e), tt.is)
		})
	}
}

func testUpdateExecution(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	e := NewExecution("exec_u", codemode.StatusRunning)
	e.CreatedAt = at(0)
	e.Task = &codemode.Task{TTL: time.Hour}
	create(t, s, e)
	want := &codemode.Execution{
		ID:         e.ID,
		Code:       "ignored: code never changes",
		Status:     codemode.StatusPaused,
		Result:     json.RawMessage(`[1,2,3]`),
		Error:      "",
		Logs:       []string{"one", "two"},
		Connectors: map[string]string{"notes": "sha256:def", "files": "sha256:123"},
		Clock:      codemode.Clock{Seed: 7, Times: []int64{5}},
	}
	must(t, s.UpdateExecution(ctx, want, codemode.StatusRunning, at(0)))
	if !want.UpdatedAt.After(at(0)) {
		t.Errorf("UpdatedAt = %v, want a zero one set by the store", want.UpdatedAt)
	}
	got := execution(t, s, e.ID)
	// Code, CreatedAt, Task and StartedBy are written once, when the run
	// is created.
	want.Code, want.CreatedAt, want.Task, want.StartedBy = e.Code, e.CreatedAt, e.Task, e.StartedBy
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after update (-want +got):\n%s", diff)
	}

	// Clearing fields stores them empty; a given UpdatedAt is kept.
	cleared := &codemode.Execution{ID: e.ID, Status: codemode.StatusRunning, UpdatedAt: at(9)}
	must(t, s.UpdateExecution(ctx, cleared, codemode.StatusPaused, want.UpdatedAt))
	got = execution(t, s, e.ID)
	cleared.Code, cleared.CreatedAt, cleared.Task, cleared.StartedBy = e.Code, e.CreatedAt, e.Task, e.StartedBy
	if diff := cmp.Diff(cleared, got); diff != "" {
		t.Errorf("after clearing (-want +got):\n%s", diff)
	}
}

func testUpdateExecutionErrors(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	p := NewExecution("exec_p", codemode.StatusPaused)
	p.CreatedAt = at(1)
	create(t, s, p)
	tests := []struct {
		name  string
		e     *codemode.Execution
		from  codemode.ExecStatus
		since time.Time
		is    error
		says  string
	}{
		{"wrong from", NewExecution("exec_p", codemode.StatusCompleted), codemode.StatusRunning, at(1), codemode.ErrConflict, "status is paused, not running as read"},
		// Paused as read, but not the pause that was read (the run left
		// it and came back): a decision about that one is refused.
		{"changed since", NewExecution("exec_p", codemode.StatusRejected), codemode.StatusPaused, at(0), codemode.ErrConflict, "status is paused, changed since it was read, not paused as read"},
		{"unknown id", NewExecution("exec_none", codemode.StatusCompleted), codemode.StatusRunning, at(1), codemode.ErrNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.UpdateExecution(ctx, tt.e, tt.from, tt.since)
			if !errors.Is(err, tt.is) || !strings.Contains(fmt.Sprint(err), tt.says) {
				t.Fatalf("UpdateExecution error = %v, want %v saying %q", err, tt.is, tt.says)
			}
		})
	}
	got := execution(t, s, "exec_p")
	if got.Status != codemode.StatusPaused {
		t.Errorf("status after failed update = %v, want paused", got.Status)
	}
}

// testUnknownExecution: what names an execution that does not exist is
// told ErrNotFound.
func testUnknownExecution(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	if _, err := s.GetExecution(ctx, "exec_none"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("GetExecution error = %v, want ErrNotFound", err)
	}
	if err := s.DeleteExecution(ctx, "exec_none"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("DeleteExecution error = %v, want ErrNotFound", err)
	}
	if _, err := s.Entries(ctx, "exec_none"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("Entries error = %v, want ErrNotFound", err)
	}
}

func testListExecutions(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	// Inserted out of time order; b, c and d share a timestamp, so insertion
	// order breaks the tie.
	seed := []struct {
		id     string
		status codemode.ExecStatus
		t      time.Time
	}{
		{"a", codemode.StatusCompleted, at(1)},
		{"e", codemode.StatusPaused, at(9)},
		{"b", codemode.StatusCompleted, at(5)},
		{"c", codemode.StatusPaused, at(5)},
		{"d", codemode.StatusCompleted, at(5)},
		{"z", codemode.StatusError, at(0)},
	}
	tasks := map[string]bool{"b": true, "c": true, "z": true} // started as tasks
	for _, x := range seed {
		e := NewExecution(x.id, x.status)
		e.CreatedAt = x.t
		if tasks[x.id] {
			e.Task = &codemode.Task{TTL: time.Minute}
		}
		create(t, s, e)
	}
	tests := []struct {
		name string
		f    codemode.ExecutionFilter
		want []string
	}{
		{"all", codemode.ExecutionFilter{}, []string{"e", "d", "c", "b", "a", "z"}},
		{"limit", codemode.ExecutionFilter{Limit: 3}, []string{"e", "d", "c"}},
		{"limit 2 after c", codemode.ExecutionFilter{Limit: 2, After: codemode.ExecutionKey{CreatedAt: at(5), ID: "c"}}, []string{"b", "a"}},
		{"after d, among its ties", codemode.ExecutionFilter{After: codemode.ExecutionKey{CreatedAt: at(5), ID: "d"}}, []string{"c", "b", "a", "z"}},
		{"after e", codemode.ExecutionFilter{After: codemode.ExecutionKey{CreatedAt: at(9), ID: "e"}}, []string{"d", "c", "b", "a", "z"}},
		{"after the last", codemode.ExecutionFilter{Limit: 2, After: codemode.ExecutionKey{CreatedAt: at(0), ID: "z"}}, nil},
		// A key whose execution is gone stands before those created with it.
		{"after one gone, at the ties' time", codemode.ExecutionFilter{After: codemode.ExecutionKey{CreatedAt: at(5), ID: "gone"}}, []string{"d", "c", "b", "a", "z"}},
		{"after one gone, between times", codemode.ExecutionFilter{After: codemode.ExecutionKey{CreatedAt: at(3), ID: "gone"}}, []string{"a", "z"}},
		// A key's time decides where a list goes on, not the time stored
		// with its id.
		{"after e's id at another time", codemode.ExecutionFilter{After: codemode.ExecutionKey{CreatedAt: at(1), ID: "e"}}, []string{"a", "z"}},
		{"completed", codemode.ExecutionFilter{Status: codemode.StatusCompleted}, []string{"d", "b", "a"}},
		{"paused, limit 1", codemode.ExecutionFilter{Status: codemode.StatusPaused, Limit: 1}, []string{"e"}},
		{"none rolled back", codemode.ExecutionFilter{Status: codemode.StatusRolledBack}, nil},
		{"tasks", codemode.ExecutionFilter{Tasks: true}, []string{"c", "b", "z"}},
		{"tasks, limit 2", codemode.ExecutionFilter{Tasks: true, Limit: 2}, []string{"c", "b"}},
		{"tasks, limit 2 after c", codemode.ExecutionFilter{Tasks: true, Limit: 2, After: codemode.ExecutionKey{CreatedAt: at(5), ID: "c"}}, []string{"b", "z"}},
		{"tasks after d, no task", codemode.ExecutionFilter{Tasks: true, After: codemode.ExecutionKey{CreatedAt: at(5), ID: "d"}}, []string{"c", "b", "z"}},
		{"completed after d", codemode.ExecutionFilter{Status: codemode.StatusCompleted, After: codemode.ExecutionKey{CreatedAt: at(5), ID: "d"}}, []string{"b", "a"}},
		{"completed tasks", codemode.ExecutionFilter{Tasks: true, Status: codemode.StatusCompleted}, []string{"b"}},
		{"paused tasks, limit 1", codemode.ExecutionFilter{Tasks: true, Status: codemode.StatusPaused, Limit: 1}, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, listed(t, s, tt.f)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	for _, key := range []codemode.ExecutionKey{{ID: "c"}, {CreatedAt: at(5)}} {
		if _, err := s.ListExecutions(ctx, codemode.ExecutionFilter{After: key}); err == nil {
			t.Errorf("after %+v, a key without an id or a time, was taken; want an error", key)
		}
	}
	// The listed records are complete.
	got, err := s.ListExecutions(ctx, codemode.ExecutionFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := execution(t, s, "e")
	if diff := cmp.Diff([]*codemode.Execution{want}, got); diff != "" {
		t.Errorf("listed record (-want +got):\n%s", diff)
	}
	// A brief list reads the keys and what changes, nothing else.
	if got, err = s.ListExecutions(ctx, codemode.ExecutionFilter{Limit: 1, Brief: true}); err != nil {
		t.Fatal(err)
	}
	brief := &codemode.Execution{ID: want.ID, Status: want.Status, Owner: want.Owner, Trace: want.Trace, StartedBy: want.StartedBy, CreatedAt: want.CreatedAt, UpdatedAt: want.UpdatedAt}
	if diff := cmp.Diff([]*codemode.Execution{brief}, got); diff != "" {
		t.Errorf("brief listed record (-want +got):\n%s", diff)
	}
	// One run by its id, without its output: all but its result and logs.
	if got, err = s.ListExecutions(ctx, codemode.ExecutionFilter{ID: "c", NoOutput: true}); err != nil {
		t.Fatal(err)
	}
	want = execution(t, s, "c")
	want.Result, want.Logs = nil, nil
	if diff := cmp.Diff([]*codemode.Execution{want}, got); diff != "" {
		t.Errorf("record of id c without its output (-want +got):\n%s", diff)
	}
	if got := listed(t, s, codemode.ExecutionFilter{ID: "c", Status: codemode.StatusCompleted}); got != nil {
		t.Errorf("completed run of id c (it is paused): %v, want none", got)
	}
}

// A list read a page at a time, each page after the last key of the one
// before, lists each execution once while others are created (newer) and
// deleted (the last listed among them) between pages.
func testListExecutionsByPage(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	seed := func(id string, n int) {
		e := NewExecution(id, codemode.StatusCompleted)
		e.CreatedAt = at(n)
		create(t, s, e)
	}
	for n := range 7 {
		seed(fmt.Sprintf("p%d", n), n)
	}
	seed("q5", 5) // p5's tie, inserted later: listed first
	between := []func(){
		func() { seed("new", 20) },
		func() {
			seed("newer", 21)
			must(t, s.DeleteExecution(ctx, "p2")) // the last listed
			must(t, s.DeleteExecution(ctx, "p1")) // not listed yet
		},
	}
	var got []string
	flt := codemode.ExecutionFilter{Limit: 3}
	for page := 0; ; page++ {
		es, err := s.ListExecutions(ctx, flt)
		must(t, err)
		for _, e := range es {
			got = append(got, e.ID)
		}
		if len(es) < flt.Limit {
			break
		}
		flt.After = codemode.ExecutionKey{CreatedAt: es[len(es)-1].CreatedAt, ID: es[len(es)-1].ID}
		if page < len(between) {
			between[page]()
		}
	}
	if diff := cmp.Diff([]string{"p6", "q5", "p5", "p4", "p3", "p2", "p0"}, got); diff != "" {
		t.Errorf("ids listed by page (-want +got):\n%s", diff)
	}
}

// A row the store cannot read (a status this release does not know,
// broken JSON, as another release or a hand edit may leave) is left out of
// a list rather than failing it: the others are listed, a limited list
// still fills its page, and reading that row alone says what is wrong.
func testListExecutionsSkipsUnreadable(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	for n := range 6 {
		e := NewExecution(fmt.Sprintf("u%d", n), codemode.StatusRunning)
		e.CreatedAt = at(n)
		create(t, s, e)
	}
	f.Exec(t, s, `UPDATE executions SET status = 'exploded' WHERE id = 'u4'`)
	f.Exec(t, s, `UPDATE executions SET logs = '["cut' WHERE id = 'u3'`)
	f.Exec(t, s, `UPDATE executions SET task = '{' WHERE id = 'u1'`)
	for _, tt := range []struct {
		name string
		f    codemode.ExecutionFilter
		want []string
	}{
		{"all", codemode.ExecutionFilter{}, []string{"u5", "u2", "u0"}},
		{"running", codemode.ExecutionFilter{Status: codemode.StatusRunning}, []string{"u5", "u2", "u0"}},
		{"a page", codemode.ExecutionFilter{Limit: 2}, []string{"u5", "u2"}},
		{"the next page", codemode.ExecutionFilter{Limit: 2, After: codemode.ExecutionKey{CreatedAt: at(2), ID: "u2"}}, []string{"u0"}},
		{"tasks", codemode.ExecutionFilter{Tasks: true}, nil},
	} {
		if diff := cmp.Diff(tt.want, listed(t, s, tt.f)); diff != "" {
			t.Errorf("%s: listed (-want +got):\n%s", tt.name, diff)
		}
	}
	for id, want := range map[string]string{"u4": `unknown execution status "exploded"`, "u3": "decode column logs", "u1": "decode column task"} {
		_, err := s.GetExecution(ctx, id)
		if !errors.Is(err, codemode.ErrUnreadable) || !strings.Contains(err.Error(), want) {
			t.Errorf("GetExecution(%s) = %v, want an error saying %q", id, err, want)
		}
	}
}

// A limited list that left unreadable rows out reads the rows more from
// where the last row it read stands, not from that row's key: a row with
// an empty id, which no key (codemode.ExecutionKey) can name, does not
// fail the list.
func testListExecutionsPastAnEmptyID(t *testing.T, f Factory) {
	s := f.New(t)
	for n := range 4 {
		e := NewExecution(fmt.Sprintf("v%d", n), codemode.StatusRunning)
		e.CreatedAt = at(n)
		create(t, s, e)
	}
	f.Exec(t, s, `UPDATE executions SET status = 'exploded' WHERE id IN ('v3', 'v2')`)
	f.Exec(t, s, `UPDATE executions SET id = '' WHERE id = 'v2'`)
	for limit, want := range map[int][]string{1: {"v1"}, 2: {"v1", "v0"}, 3: {"v1", "v0"}} {
		if diff := cmp.Diff(want, listed(t, s, codemode.ExecutionFilter{Limit: limit})); diff != "" {
			t.Errorf("a page of %d: listed (-want +got):\n%s", limit, diff)
		}
	}
}

func testDeleteExecutionCascades(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	for _, id := range []string{"gone", "kept"} {
		create(t, s, NewExecution(id, codemode.StatusCompleted))
		for seq := 1; seq <= 3; seq++ {
			insert(t, s, NewEntry(id, seq, codemode.EntryApplied))
		}
	}
	must(t, s.DeleteExecution(ctx, "gone"))
	if _, err := s.GetExecution(ctx, "gone"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("GetExecution after delete: %v, want ErrNotFound", err)
	}
	if _, err := s.Entries(ctx, "gone"); !errors.Is(err, codemode.ErrNotFound) {
		t.Errorf("Entries after delete: %v, want ErrNotFound", err)
	}
	if got := countEntries(t, s, "gone"); got != 0 {
		t.Errorf("entries of the deleted execution = %d, want 0", got)
	}
	if got := countEntries(t, s, "kept"); got != 3 {
		t.Errorf("entries of the other execution = %d, want 3", got)
	}
}

// countEntries counts the entries of id; an execution that does not exist
// is created first (and deleted after), so entries left behind by a
// deleted execution of that id are counted too.
func countEntries(t *testing.T, s codemode.Store, id string) int {
	t.Helper()
	ctx := context.Background()
	log, err := s.Entries(ctx, id)
	if errors.Is(err, codemode.ErrNotFound) {
		create(t, s, NewExecution(id, codemode.StatusCompleted))
		defer func() {
			must(t, s.DeleteExecution(ctx, id))
		}()
		log, err = s.Entries(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

func testPruneExecutions(t *testing.T, f Factory) {
	// Oldest first: o1..o8.
	seed := []struct {
		id     string
		status codemode.ExecStatus
	}{
		{"o1", codemode.StatusCompleted},
		{"o2", codemode.StatusPaused},
		{"o3", codemode.StatusError},
		{"o4", codemode.StatusRunning},
		{"o5", codemode.StatusRejected},
		{"o6", codemode.StatusRolledBack},
		{"o7", codemode.StatusCompleted},
		{"o8", codemode.StatusPaused},
		{"o9", codemode.StatusCancelled},
	}
	tests := []struct {
		keep    int
		deleted int
		left    []string // newest first
	}{
		{keep: 10, deleted: 0, left: []string{"o9", "o8", "o7", "o6", "o5", "o4", "o3", "o2", "o1"}},
		{keep: 6, deleted: 0, left: []string{"o9", "o8", "o7", "o6", "o5", "o4", "o3", "o2", "o1"}},
		{keep: 4, deleted: 2, left: []string{"o9", "o8", "o7", "o6", "o5", "o4", "o2"}},
		{keep: 2, deleted: 4, left: []string{"o9", "o8", "o7", "o4", "o2"}},
		{keep: 0, deleted: 6, left: []string{"o8", "o4", "o2"}},
	}
	if _, err := f.New(t).PruneExecutions(context.Background(), -1); err == nil {
		t.Error("PruneExecutions(-1) succeeded")
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("keep=%d", tt.keep), func(t *testing.T) {
			s := f.New(t)
			ctx := context.Background()
			for i, x := range seed {
				e := NewExecution(x.id, x.status)
				e.CreatedAt = at(i)
				create(t, s, e)
				insert(t, s, NewEntry(x.id, 1, codemode.EntryApplied))
			}
			n, err := s.PruneExecutions(ctx, tt.keep)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.deleted {
				t.Errorf("PruneExecutions(%d) = %d, want %d", tt.keep, n, tt.deleted)
			}
			if diff := cmp.Diff(tt.left, listed(t, s, codemode.ExecutionFilter{})); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
			for _, x := range seed {
				want := 0
				if slices.Contains(tt.left, x.id) {
					want = 1
				}
				if got := countEntries(t, s, x.id); got != want {
					t.Errorf("entries of %s = %d, want %d (pruned logs go with their execution)", x.id, got, want)
				}
			}
		})
	}
}
