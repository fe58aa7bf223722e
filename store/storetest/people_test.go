package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// testPeople: a run keeps its starter (written once: an update does not
// change it), ListExecutions keeps one person's runs, and an entry's
// decider is set by the update that names one and never changed after.
func testPeople(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	mine := NewExecution("exec_alice", codemode.StatusPaused)
	mine.CreatedAt = at(1)
	theirs := NewExecution("exec_bob", codemode.StatusRunning)
	theirs.StartedBy, theirs.CreatedAt = bob, at(2)
	nobody := NewExecution("exec_old", codemode.StatusCompleted)
	nobody.StartedBy, nobody.CreatedAt = codemode.Person{}, at(3)
	create(t, s, mine, theirs, nobody)
	moved := *mine
	moved.StartedBy = bob // not written by an update
	moved.Status, moved.UpdatedAt = codemode.StatusRunning, at(4)
	must(t, s.UpdateExecution(ctx, &moved, codemode.StatusPaused, mine.UpdatedAt))
	got := execution(t, s, mine.ID)
	if got.StartedBy != alice {
		t.Errorf("StartedBy after an update = %+v, want %+v (written once)", got.StartedBy, alice)
	}
	for _, tc := range []struct {
		subject string
		want    []string
	}{
		{alice.Subject, []string{"exec_alice"}},
		{bob.Subject, []string{"exec_bob"}},
		{"sub-nobody", nil},
		{"", []string{"exec_old", "exec_bob", "exec_alice"}},
	} {
		if diff := cmp.Diff(tc.want, listed(t, s, codemode.ExecutionFilter{StartedBy: tc.subject})); diff != "" {
			t.Errorf("ListExecutions(StartedBy %q) (-want +got):\n%s", tc.subject, diff)
		}
	}
	list, err := s.ListExecutions(ctx, codemode.ExecutionFilter{StartedBy: alice.Subject, Status: codemode.StatusRunning, Limit: 1})
	if err != nil || len(list) != 1 || list[0].ID != mine.ID {
		t.Errorf("ListExecutions(alice, running, limit 1) = %v, %v; want exec_alice", list, err)
	}

	pending := NewEntry(mine.ID, 1, codemode.EntryPending)
	other := NewEntry(mine.ID, 2, codemode.EntryPending)
	must(t, s.WriteEntries(ctx, []codemode.Entry{pending, other}, nil))
	approved, rejected := pending, other
	approved.State, approved.DecidedBy, approved.DecidedAt = codemode.EntryExecuting, bob, at(5)
	rejected.State, rejected.DecidedBy, rejected.DecidedAt = codemode.EntryRejected, bob, at(5)
	must(t, s.WriteEntries(ctx, nil, []codemode.EntryUpdate{{Entry: approved, From: codemode.EntryPending}, {Entry: rejected, From: codemode.EntryPending}}))
	// A later update without a decider, or with another, keeps the first.
	applied := approved
	applied.State, applied.DecidedBy, applied.DecidedAt = codemode.EntryApplied, codemode.Person{}, at(0)
	must(t, s.UpdateEntry(ctx, applied, codemode.EntryExecuting))
	log := entries(t, s, mine.ID)
	for _, en := range log {
		if en.DecidedBy != bob || !en.DecidedAt.Equal(at(5)) {
			t.Errorf("entry %d decided by %+v at %v, want %+v at %v", en.Seq, en.DecidedBy, en.DecidedAt, bob, at(5))
		}
	}
	clipped, err := s.ClippedEntries(ctx, mine.ID, codemode.LogQuery{Preview: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(clipped) != 2 || clipped[0].DecidedBy != bob {
		t.Errorf("ClippedEntries lost the decider: %+v", clipped)
	}
	undecided := NewEntry(mine.ID, 3, codemode.EntryExecuting)
	insert(t, s, undecided)
	log = entries(t, s, mine.ID)
	if en := log[2]; !en.DecidedBy.IsZero() || !en.DecidedAt.IsZero() {
		t.Errorf("an entry nobody decided reads back decided by %+v at %v", en.DecidedBy, en.DecidedAt)
	}
}

// testAudit: records read back as written (their source too), oldest first, from Since, up
// to Limit; they outlive the run they name; PruneAudit deletes only the
// older ones; a record without an action or person is refused.
func testAudit(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	recs := []codemode.AuditRecord{
		{At: at(1), Person: alice, Action: codemode.AuditRun, ExecutionID: "exec_1", Outcome: "paused"},
		{At: at(2), Person: bob, Action: codemode.AuditApprove, ExecutionID: "exec_1", Target: "github.createIssue", Outcome: codemode.AuditOK, Source: codemode.SourceConsole},
		{At: at(2), Person: alice, Action: codemode.AuditApprove, ExecutionID: "exec_1", Seq: 2, Target: "github.createIssue", Outcome: "refused: separation"},
		{At: at(3), Person: codemode.Local, Action: codemode.AuditSignIn, Target: "github", Outcome: codemode.AuditOK},
	}
	for _, r := range recs {
		must(t, s.Audit(ctx, r))
	}
	for _, bad := range []codemode.AuditRecord{{Person: alice}, {Action: codemode.AuditRun}} {
		if err := s.Audit(ctx, bad); err == nil {
			t.Errorf("Audit(%+v) = nil, want an error", bad)
		}
	}
	noIDs := cmp.Transformer("noID", func(r codemode.AuditRecord) codemode.AuditRecord { r.ID = 0; return r })
	audit := func(q codemode.AuditQuery) []codemode.AuditRecord {
		t.Helper()
		recs, err := s.AuditRecords(ctx, q)
		must(t, err)
		return recs
	}
	all := audit(codemode.AuditQuery{})
	if diff := cmp.Diff(recs, all, noIDs); diff != "" {
		t.Errorf("AuditRecords (-want +got):\n%s", diff)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Errorf("ids not increasing: %d after %d", all[i].ID, all[i-1].ID)
		}
	}
	if diff := cmp.Diff(recs[1:3], audit(codemode.AuditQuery{Since: at(2), Limit: 2}), noIDs); diff != "" {
		t.Errorf("AuditRecords(since 2, limit 2) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(recs[1:3], audit(codemode.AuditQuery{ExecutionID: "exec_1", Since: at(2)}), noIDs); diff != "" {
		t.Errorf("AuditRecords(exec_1, since 2) (-want +got):\n%s", diff)
	}
	n, err := s.PruneAudit(ctx, at(2))
	if err != nil || n != 1 {
		t.Errorf("PruneAudit(before 2) = %d, %v; want 1", n, err)
	}
	if diff := cmp.Diff(recs[1:], audit(codemode.AuditQuery{}), noIDs); diff != "" {
		t.Errorf("after PruneAudit (-want +got):\n%s", diff)
	}
}
