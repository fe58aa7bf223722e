package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// TestUpdateEntryRace races two deciders approving the same pending entry,
// from one handle and from two handles on the same file: exactly one wins,
// the other gets ErrConflict, and the stored result is the winner's.
func TestUpdateEntryRace(t *testing.T) {
	for _, handles := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d handles", handles), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "codemode.db")
			stores := []*Store{openAt(t, path, Options{})}
			if handles == 2 {
				stores = append(stores, openAt(t, path, Options{}))
			}
			const rounds = 40
			if err := stores[0].CreateExecution(ctx, newExecution("exec_race", codemode.StatusPaused)); err != nil {
				t.Fatal(err)
			}
			for seq := 1; seq <= rounds; seq++ {
				if err := stores[0].InsertEntry(ctx, newEntry("exec_race", seq, codemode.EntryPending)); err != nil {
					t.Fatal(err)
				}
			}
			for seq := 1; seq <= rounds; seq++ {
				var (
					wg   sync.WaitGroup
					errs [2]error
				)
				for c := range 2 {
					s := stores[c%len(stores)]
					e := newEntry("exec_race", seq, codemode.EntryExecuting)
					e.Result = json.RawMessage(fmt.Sprintf(`{"winner":%d}`, c))
					wg.Go(func() { errs[c] = s.UpdateEntry(ctx, e, codemode.EntryPending) })
				}
				wg.Wait()
				winner := -1
				for c, err := range errs {
					switch {
					case err == nil:
						if winner >= 0 {
							t.Fatalf("seq %d: both updates won", seq)
						}
						winner = c
					case !errors.Is(err, codemode.ErrConflict):
						t.Fatalf("seq %d: contender %d: %v, want nil or ErrConflict", seq, c, err)
					}
				}
				if winner < 0 {
					t.Fatalf("seq %d: no update won: %v", seq, errs)
				}
				got, err := stores[len(stores)-1].Entries(ctx, "exec_race")
				if err != nil {
					t.Fatal(err)
				}
				want := json.RawMessage(fmt.Sprintf(`{"winner":%d}`, winner))
				if g := got[seq-1]; g.State != codemode.EntryExecuting || !cmp.Equal(want, g.Result) {
					t.Fatalf("seq %d: stored %v %s, want executing %s", seq, g.State, g.Result, want)
				}
			}
		})
	}
}

// TestUpdateExecutionRace: two handles resume the same paused run; one wins.
func TestUpdateExecutionRace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	stores := []*Store{openAt(t, path, Options{}), openAt(t, path, Options{})}
	const rounds = 20
	for i := range rounds {
		id := fmt.Sprintf("exec_%d", i)
		if err := stores[0].CreateExecution(ctx, newExecution(id, codemode.StatusPaused)); err != nil {
			t.Fatal(err)
		}
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		for c, s := range stores {
			e := newExecution(id, codemode.StatusRunning)
			wg.Go(func() { errs[c] = s.UpdateExecution(ctx, e, codemode.StatusPaused) })
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else if !errors.Is(err, codemode.ErrConflict) {
				t.Fatalf("%s: %v, want nil or ErrConflict", id, err)
			}
		}
		if wins != 1 {
			t.Fatalf("%s: %d updates won, want exactly 1 (%v)", id, wins, errs)
		}
	}
}

// TestConcurrentWriters writes from 8 goroutines over two handles on one
// file; the busy timeout and IMMEDIATE transactions must absorb every
// SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	stores := []*Store{openAt(t, path, Options{}), openAt(t, path, Options{})}
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
			if err := s.CreateExecution(ctx, newExecution(id, codemode.StatusRunning)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			for i := 1; i <= inserts; i++ {
				e := newEntry(id, i, codemode.EntryExecuting)
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
	var n int
	if err := stores[0].DB().QueryRow(`SELECT count(*) FROM entries WHERE state = 'applied'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*inserts {
		t.Errorf("applied entries = %d, want %d", n, writers*inserts)
	}
}
