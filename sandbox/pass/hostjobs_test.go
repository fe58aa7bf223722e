package pass

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostJobsStress drives hostJobs as a pass does, with random pauses on
// the VM goroutine so that the rescuer fires at every point, and the pass
// ending (over) at a random moment: every job runs exactly once (taken
// back by the VM goroutine, spawned, or rescued), no job runs on a
// goroutine while one runs inline on the VM goroutine, and nothing is
// started after stop.
func TestHostJobsStress(t *testing.T) {
	rounds, jobs := 300, 40
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		var (
			q       hostJobs
			wg      sync.WaitGroup
			active  atomic.Int32 // jobs started on a goroutine and not yet delivered
			started atomic.Int32 // jobs started on a goroutine
			ended   atomic.Bool
			stopped atomic.Bool
			counts  = make([]atomic.Int32, jobs)
		)
		overAt := rng.IntN(jobs + 1)
		q.over = ended.Load
		q.start = func(j *hostJob) {
			if stopped.Load() {
				t.Errorf("round %d: job %d started after stop", round, j.id)
			}
			active.Add(1)
			started.Add(1)
			wg.Go(func() {
				j.f()
				active.Add(-1)
				q.delivered()
			})
		}
		pause := func() {
			switch rng.IntN(4) {
			case 0:
				time.Sleep(time.Duration(rng.IntN(2500)) * time.Microsecond) // past rescueAfter, sometimes
			case 1:
				for deadline := time.Now().Add(time.Duration(rng.IntN(1500)) * time.Microsecond); time.Now().Before(deadline); {
				}
			}
		}
		runInline := func(j *hostJob) {
			if !q.idle() {
				q.spawn(j)
				return
			}
			if n := active.Load(); n != 0 {
				t.Errorf("round %d: nothing outstanding, yet %d jobs run", round, n)
			}
			// Nothing may start while a job runs inline: the slot is
			// empty and nothing was on its way to a goroutine.
			before := started.Load()
			j.f()
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
			if started.Load() != before {
				t.Errorf("round %d: a job started on a goroutine while job %d ran inline", round, j.id)
			}
		}
		for i := range jobs {
			if i == overAt {
				ended.Store(true)
			}
			j := &hostJob{id: i, f: func() func() { counts[i].Add(1); return nil }}
			for _, sp := range q.hold(j, rng.IntN(8) == 0) {
				q.spawn(sp)
			}
			pause()
			if rng.IntN(2) == 0 { // the end of the turn
				if j := q.take(); j != nil {
					runInline(j)
				}
			}
		}
		if j := q.take(); j != nil {
			runInline(j)
		}
		q.stop()
		stopped.Store(true)
		wg.Wait()
		for i := range counts {
			if n := counts[i].Load(); n != 1 {
				t.Fatalf("round %d: job %d ran %d times", round, i, n)
			}
		}
		if n := q.outstanding.Load(); n != 0 {
			t.Fatalf("round %d: %d jobs still counted outstanding", round, n)
		}
	}
}
