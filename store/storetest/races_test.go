package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// testUpdateEntryRace races two deciders approving the same pending entry,
// from one handle and from two handles on one database: exactly one wins,
// the other gets ErrConflict, and the stored result is the winner's.
func testUpdateEntryRace(t *testing.T, f Factory) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d handles", n), func(t *testing.T) {
			ctx := context.Background()
			stores := handles(t, f, n)
			const rounds = 40
			create(t, stores[0], NewExecution("exec_race", codemode.StatusPaused))
			for seq := 1; seq <= rounds; seq++ {
				insert(t, stores[0], NewEntry("exec_race", seq, codemode.EntryPending))
			}
			for seq := 1; seq <= rounds; seq++ {
				winner := race(t, fmt.Sprintf("seq %d", seq), 2, func(c int) (bool, error) {
					e := NewEntry("exec_race", seq, codemode.EntryExecuting)
					e.Result = json.RawMessage(fmt.Sprintf(`{"winner":%d}`, c))
					return conditional(stores[c%len(stores)].UpdateEntry(ctx, e, codemode.EntryPending))
				})
				got := entries(t, stores[len(stores)-1], "exec_race")
				want := json.RawMessage(fmt.Sprintf(`{"winner":%d}`, winner))
				if g := got[seq-1]; g.State != codemode.EntryExecuting || !cmp.Equal(want, g.Result) {
					t.Fatalf("seq %d: stored %v %s, want executing %s", seq, g.State, g.Result, want)
				}
			}
		})
	}
}

// testClaimRace: two handles claim the same paused run for different
// owners (approve it); exactly one wins and the run is the winner's.
func testClaimRace(t *testing.T, f Factory) {
	ctx := context.Background()
	stores := handles(t, f, 2)
	const rounds = 20
	for i := range rounds {
		id := fmt.Sprintf("exec_%d", i)
		paused := NewExecution(id, codemode.StatusPaused)
		create(t, stores[0], paused)
		winner := race(t, id, 2, func(c int) (bool, error) {
			e := NewExecution(id, codemode.StatusRunning)
			e.Owner = fmt.Sprintf("own_%d", c)
			return conditional(stores[c].UpdateExecution(ctx, e, codemode.StatusPaused, paused.UpdatedAt))
		})
		got := execution(t, stores[1-winner], id)
		if want := fmt.Sprintf("own_%d", winner); got.Status != codemode.StatusRunning || got.Owner != want {
			t.Fatalf("%s: %s owned by %q, want running owned by the winner %q", id, got.Status, got.Owner, want)
		}
	}
}

// testConcurrentWriters writes from 8 goroutines over two handles on one
// database; every write succeeds (a store waits for a busy database).
func testConcurrentWriters(t *testing.T, f Factory) {
	ctx := context.Background()
	stores := handles(t, f, 2)
	const (
		writers = 8
		inserts = 50
	)
	// write logs inserts calls of a new run, each inserted executing then
	// moved to applied, and returns the first error.
	write := func(s codemode.Store, id string) error {
		if err := s.CreateExecution(ctx, NewExecution(id, codemode.StatusRunning)); err != nil {
			return err
		}
		for i := 1; i <= inserts; i++ {
			e := NewEntry(id, i, codemode.EntryExecuting)
			if err := s.InsertEntry(ctx, e); err != nil {
				return err
			}
			e.State, e.Result = codemode.EntryApplied, json.RawMessage(`{"ok":true}`)
			if err := s.UpdateEntry(ctx, e, codemode.EntryExecuting); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() { errs[w] = write(stores[w%2], fmt.Sprintf("exec_w%d", w)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("writes failed: %v", err)
	}
	for w := range writers {
		id := fmt.Sprintf("exec_w%d", w)
		log := entries(t, stores[0], id)
		applied := 0
		for _, e := range log {
			if e.State == codemode.EntryApplied {
				applied++
			}
		}
		if applied != inserts {
			t.Errorf("%s: %d applied entries, want %d", id, applied, inserts)
		}
	}
}

// testPruneRace prunes from two handles on one database at once, as two
// replicas' housekeeping may, while a third finishes more runs: the
// deletions add up (no run is deleted twice, no error), and what is left
// is the keep newest terminal runs besides every running and paused one.
func testPruneRace(t *testing.T, f Factory) {
	ctx := context.Background()
	stores := handles(t, f, 2)
	a := stores[0]
	const (
		runs = 60
		keep = 10
	)
	var want []string // newest first
	for i := range runs {
		status := codemode.StatusCompleted
		if i%10 == 3 {
			status = codemode.StatusPaused
		}
		e := NewExecution(fmt.Sprintf("p%02d", i), status)
		e.CreatedAt = at(i)
		create(t, a, e)
		insert(t, a, NewEntry(e.ID, 1, codemode.EntryApplied))
	}
	terminal := 0
	for i := runs - 1; i >= 0; i-- {
		if i%10 == 3 {
			want = append(want, fmt.Sprintf("p%02d", i))
		} else if terminal < keep {
			terminal++
			want = append(want, fmt.Sprintf("p%02d", i))
		}
	}
	var (
		wg      sync.WaitGroup
		deleted [2]int
		errs    [2]error
	)
	for c, s := range stores {
		wg.Go(func() { deleted[c], errs[c] = s.PruneExecutions(ctx, keep) })
	}
	wg.Wait()
	for c, err := range errs {
		if err != nil {
			t.Fatalf("prune from handle %d: %v", c, err)
		}
	}
	if got, wantN := deleted[0]+deleted[1], runs-len(want); got != wantN {
		t.Errorf("the two prunes deleted %d + %d runs, want %d in all", deleted[0], deleted[1], wantN)
	}
	if diff := cmp.Diff(want, listed(t, a, codemode.ExecutionFilter{})); diff != "" {
		t.Errorf("left after racing prunes (-want +got):\n%s", diff)
	}
}
