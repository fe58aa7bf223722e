package runtime

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The invariant of claims (hold.go), under -race: while this process
// settles or recovers a run (busy), no request of it holds the run, and
// a run some request holds is never taken for recovery or settled.
// Requests take and let go of holds (releasing or stranding them) while
// a heartbeat recovers and settles, on a few runs at once.
func TestClaimsStress(t *testing.T) {
	c := newClaims(time.Minute)
	const runs, requests, rounds = 3, 8, 300
	var live, busy [runs]atomic.Int64
	ctx := context.Background()
	var wg sync.WaitGroup
	for r := range requests {
		wg.Go(func() {
			for i := range rounds {
				n := (r + i) % runs
				id := fmt.Sprint("exec_", n)
				h, err := c.take(ctx, id)
				if err != nil {
					t.Error(err)
					return
				}
				if busy[n].Load() != 0 {
					t.Errorf("%s was taken while it was being settled or recovered", id)
				}
				live[n].Add(1)
				runtime.Gosched() // the request works
				live[n].Add(-1)
				if i%5 == 0 {
					h.strand(func(context.Context) error { return nil })
				} else {
					h.release()
				}
				h.release() // the first of release and strand wins
			}
		})
	}
	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for n := range runs {
				id := fmt.Sprint("exec_", n)
				if c.recovering(id) {
					if live[n].Load() != 0 {
						t.Errorf("%s was recovered while a request held it", id)
					}
					busy[n].Add(1)
					runtime.Gosched() // the recovery's transaction
					busy[n].Add(-1)
					c.done(id, nil)
				}
			}
			for id := range c.settling() {
				var n int
				if _, err := fmt.Sscanf(id, "exec_%d", &n); err != nil {
					t.Error(err)
					continue
				}
				if live[n].Load() != 0 {
					t.Errorf("%s was settled while a request held it", id)
				}
				busy[n].Add(1)
				runtime.Gosched() // the end's writes
				busy[n].Add(-1)
				c.done(id, nil)
			}
		}
	})
	wg.Wait()
	close(stop)
	beats.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.live) != 0 || len(c.busy) != 0 || len(c.dropped) != 0 {
		t.Errorf("after every request ended: live %v, busy %v, dropped %v; want none", c.live, c.busy, c.dropped)
	}
}
