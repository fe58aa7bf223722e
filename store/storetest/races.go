package storetest

import (
	"context"
	"encoding/json"
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
	for _, handles := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d handles", handles), func(t *testing.T) {
			ctx := context.Background()
			stores := []codemode.Store{f.New(t)}
			if handles == 2 {
				stores = append(stores, f.Another(t, stores[0]))
			}
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
	first := f.New(t)
	stores := []codemode.Store{first, f.Another(t, first)}
	const rounds = 20
	for i := range rounds {
		id := fmt.Sprintf("exec_%d", i)
		create(t, stores[0], NewExecution(id, codemode.StatusPaused))
		winner := race(t, id, 2, func(c int) (bool, error) {
			e := NewExecution(id, codemode.StatusRunning)
			e.Owner = fmt.Sprintf("own_%d", c)
			return conditional(stores[c].UpdateExecution(ctx, e, codemode.StatusPaused))
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
	first := f.New(t)
	stores := []codemode.Store{first, f.Another(t, first)}
	const (
		writers = 8
		inserts = 50
	)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range writers {
		s := stores[w%2]
		wg.Go(func() {
			id := fmt.Sprintf("exec_w%d", w)
			if err := s.CreateExecution(ctx, NewExecution(id, codemode.StatusRunning)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			for i := 1; i <= inserts; i++ {
				e := NewEntry(id, i, codemode.EntryExecuting)
				err := s.InsertEntry(ctx, e)
				if err == nil {
					e.State, e.Result = codemode.EntryApplied, json.RawMessage(`{"ok":true}`)
					err = s.UpdateEntry(ctx, e, codemode.EntryExecuting)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d writes failed; first: %v", len(errs), errs[0])
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
	a := f.New(t)
	b := f.Another(t, a)
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
	for c, s := range []codemode.Store{a, b} {
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
