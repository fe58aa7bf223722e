package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func testOwners(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	a := codemode.Owner{ID: "own_a", Host: "box", PID: 4242, Boot: "b0/pid:[1]", ProcessStart: "123456",
		StartedAt: at(1), Heartbeat: at(2), Lease: 15 * time.Second}
	b := codemode.Owner{ID: "own_b", Host: "other", PID: 7, StartedAt: at(3), Heartbeat: at(3), Lease: time.Minute}
	for _, o := range []codemode.Owner{b, a} {
		must(t, s.RegisterOwner(ctx, o))
	}
	if err := s.RegisterOwner(ctx, a); !errors.Is(err, codemode.ErrConflict) {
		t.Errorf("registering own_a twice: %v, want ErrConflict", err)
	}
	owners := func() []codemode.Owner {
		t.Helper()
		got, err := s.Owners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if diff := cmp.Diff([]codemode.Owner{a, b}, owners()); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	must(t, s.Heartbeat(ctx, "own_a", at(9)))
	a.Heartbeat = at(9)
	if diff := cmp.Diff([]codemode.Owner{a, b}, owners()); diff != "" {
		t.Errorf("owners after a heartbeat (-want +got):\n%s", diff)
	}
	must(t, s.RemoveOwner(ctx, "own_a"))
	if diff := cmp.Diff([]codemode.Owner{b}, owners()); diff != "" {
		t.Errorf("owners after a removal (-want +got):\n%s", diff)
	}
	for name, err := range map[string]error{
		"heartbeat of a removed owner":  s.Heartbeat(ctx, "own_a", at(10)),
		"heartbeat of an unknown owner": s.Heartbeat(ctx, "own_nope", at(10)),
		"second removal":                s.RemoveOwner(ctx, "own_a"),
	} {
		if !errors.Is(err, codemode.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

// recoverable creates execution id, in status from and owned by owner, with
// a log holding an entry in each state (seq 1-6, 8, 9: a call waiting for
// its downstream task) and a step executing (7).
func recoverable(t *testing.T, s codemode.Store, id string, from codemode.ExecStatus, owner string) []codemode.Entry {
	t.Helper()
	ctx := context.Background()
	e := NewExecution(id, from)
	e.Owner = owner
	create(t, s, e)
	log := []codemode.Entry{
		NewEntry(id, 1, codemode.EntryApplied),
		NewEntry(id, 2, codemode.EntryError),
		NewEntry(id, 3, codemode.EntryExecuting),
		NewEntry(id, 4, codemode.EntryPending),
		NewEntry(id, 5, codemode.EntryReverted),
		NewEntry(id, 6, codemode.EntryRejected),
		NewEntry(id, 7, codemode.EntryExecuting),
		NewEntry(id, 8, codemode.EntrySignIn),
		NewEntry(id, 9, codemode.EntryWaiting),
	}
	log[8].Task = "task-" + id
	log[1].Error = "boom"
	log[7].Error = "connector c needs a sign-in: not signed in yet"
	log[6].Kind, log[6].Connector, log[6].Method, log[6].Name, log[6].Args = codemode.KindStep, "codemode", "step", "pick", nil
	must(t, s.WriteEntries(ctx, log, nil))
	return log
}

// recovered returns log as RecoverExecution leaves it with note.
func recovered(log []codemode.Entry, note string) []codemode.Entry {
	out := append([]codemode.Entry(nil), log...)
	for i, e := range out {
		switch e.State {
		case codemode.EntryExecuting, codemode.EntryWaiting:
			out[i].State, out[i].Error = codemode.EntryUnknown, note
		case codemode.EntryPending, codemode.EntrySignIn:
			out[i].State = codemode.EntryRejected
		}
	}
	return out
}

// interruption is the record RecoverExecution is given for execution id.
func interruption(id string) *codemode.Execution {
	return &codemode.Execution{ID: id, Status: codemode.StatusError, Error: "interrupted: its process is gone", UpdatedAt: at(30)}
}

const unknownNote = "interrupted while in flight: it may or may not have taken effect"

func testRecoverExecution(t *testing.T, f Factory) {
	for _, from := range []codemode.ExecStatus{codemode.StatusRunning, codemode.StatusRollingBack} {
		t.Run(from.String(), func(t *testing.T) {
			s := f.New(t)
			ctx := context.Background()
			log := recoverable(t, s, "exec_r", from, "own_dead")
			other := recoverable(t, s, "exec_other", codemode.StatusRunning, "own_dead")
			e := interruption("exec_r")
			must(t, s.RecoverExecution(ctx, e, from, "own_dead", unknownNote))
			if e.Owner != "" || !e.UpdatedAt.Equal(at(30)) {
				t.Errorf("written back: owner %q, updated %v; want no owner, %v", e.Owner, e.UpdatedAt, at(30))
			}
			got := execution(t, s, "exec_r")
			want := NewExecution("exec_r", codemode.StatusError)
			want.Error, want.CreatedAt, want.UpdatedAt = e.Error, got.CreatedAt, at(30)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("execution (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(recovered(log, unknownNote), entries(t, s, "exec_r"), ignoreStamps); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(other, entries(t, s, "exec_other"), ignoreStamps); diff != "" {
				t.Errorf("another execution's log changed (-want +got):\n%s", diff)
			}
		})
	}
}

func testRecoverExecutionErrors(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	log := recoverable(t, s, "exec_r", codemode.StatusRunning, "own_a")
	tests := []struct {
		name  string
		id    string
		from  codemode.ExecStatus
		owner string
		is    error
	}{
		{"another status", "exec_r", codemode.StatusRollingBack, "own_a", codemode.ErrConflict},
		{"another owner", "exec_r", codemode.StatusRunning, "own_b", codemode.ErrConflict},
		{"no owner", "exec_r", codemode.StatusRunning, "", codemode.ErrConflict},
		{"unknown execution", "exec_none", codemode.StatusRunning, "own_a", codemode.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.RecoverExecution(ctx, interruption(tt.id), tt.from, tt.owner, unknownNote); !errors.Is(err, tt.is) {
				t.Errorf("RecoverExecution: %v, want %v", err, tt.is)
			}
		})
	}
	got := execution(t, s, "exec_r")
	if got.Status != codemode.StatusRunning || got.Owner != "own_a" {
		t.Errorf("after refused recoveries: %s owned by %q, want running owned by own_a", got.Status, got.Owner)
	}
	if diff := cmp.Diff(log, entries(t, s, "exec_r"), ignoreStamps); diff != "" {
		t.Errorf("log after refused recoveries (-want +got):\n%s", diff)
	}
	// Recovery is idempotent: once done, it is refused and changes nothing.
	must(t, s.RecoverExecution(ctx, interruption("exec_r"), codemode.StatusRunning, "own_a", unknownNote))
	again := interruption("exec_r")
	again.Error, again.UpdatedAt = "second", at(40)
	if err := s.RecoverExecution(ctx, again, codemode.StatusRunning, "own_a", "second note"); !errors.Is(err, codemode.ErrConflict) {
		t.Errorf("second recovery: %v, want ErrConflict", err)
	}
	if got, _ := s.GetExecution(ctx, "exec_r"); got == nil || got.Error != interruption("exec_r").Error || !got.UpdatedAt.Equal(at(30)) {
		t.Errorf("second recovery changed the execution: %+v", got)
	}
	if diff := cmp.Diff(recovered(log, unknownNote), entries(t, s, "exec_r"), ignoreStamps); diff != "" {
		t.Errorf("log after a second recovery (-want +got):\n%s", diff)
	}
}

// testRecoverRace: processes that open the store at once recover the same
// execution; exactly one does it.
func testRecoverRace(t *testing.T, f Factory) {
	ctx := context.Background()
	stores := handles(t, f, 2)
	const rounds, racers = 10, 4
	for r := range rounds {
		id := "exec_race" + string(rune('a'+r))
		log := recoverable(t, stores[0], id, codemode.StatusRunning, "own_dead")
		race(t, id, racers, func(i int) (bool, error) {
			return conditional(stores[i%len(stores)].RecoverExecution(ctx, interruption(id), codemode.StatusRunning, "own_dead", unknownNote))
		})
		if diff := cmp.Diff(recovered(log, unknownNote), entries(t, stores[1], id), ignoreStamps); diff != "" {
			t.Fatalf("%s: log (-want +got):\n%s", id, diff)
		}
	}
}
