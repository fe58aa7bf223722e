package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Holds: the runs this process works on, and what happens to them when
// the store fails (docs/ARCHITECTURE.md, "Recovery and ownership"). A
// claimed run that no request holds is this process's to settle at a
// heartbeat (owner.tick), since its renewed lease keeps every other
// process away; claims.take waits while it does.

// claims is the registry of holds of one owner. Its methods are safe for
// concurrent use.
type claims struct {
	// fixed at creation
	lease time.Duration

	mu       sync.Mutex
	live     map[string]int                         // requests holding each run; guarded by mu
	stranded map[string]func(context.Context) error // runs whose end is still to write; guarded by mu
	busy     map[string]chan struct{}               // runs being settled or recovered; closed when done; guarded by mu
	dropped  map[string]error                       // live runs held across a lapse of the lease or a takeover, with why; guarded by mu
	renewed  time.Time                              // when the last renewal of the lease that reached the store began; guarded by mu
}

func newClaims(lease time.Duration) *claims {
	return &claims{
		lease:    lease,
		live:     map[string]int{},
		stranded: map[string]func(context.Context) error{},
		busy:     map[string]chan struct{}{},
		dropped:  map[string]error{},
	}
}

// hold is one request's hold on one run. Its methods are idempotent; the
// first of release and strand wins.
type hold struct {
	c    *claims
	id   string
	once sync.Once
}

// take registers a hold on run id, waiting while this process settles or
// recovers it.
func (c *claims) take(ctx context.Context, id string) (*hold, error) {
	for {
		c.mu.Lock()
		ch := c.busy[id]
		if ch == nil {
			c.live[id]++
			c.mu.Unlock()
			return &hold{c: c, id: id}, nil
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("claim execution %s: %w", id, ctx.Err())
		}
	}
}

// release lets go of the hold: the request wrote the run's end, or
// leaves the run (if still claimed) to be recovered.
func (h *hold) release() { h.strand(nil) }

// strand lets go of the hold, leaving finish (if not nil) to write the
// run's end once the store answers again (see above). finish returns the
// store's error; it is called with no hold of the run live.
func (h *hold) strand(finish func(context.Context) error) {
	h.once.Do(func() {
		c := h.c
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.live[h.id]--; c.live[h.id] <= 0 {
			delete(c.live, h.id)
			delete(c.dropped, h.id)
		}
		if finish != nil {
			c.stranded[h.id] = finish // a newer end supersedes an older one
		}
	})
}

// renew records a renewal of the lease that reached the store, begun at
// began. If the previous one is more than a lease older, other processes
// may have taken this one for gone meanwhile: the runs held now are
// dropped (mayAct refuses them), and it reports the gap.
func (c *claims) renew(began time.Time) (lapsed time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.renewed.IsZero() {
		if gap := began.Sub(c.renewed); gap > c.lease {
			lapsed = gap
			c.dropLocked(errLapsed)
		}
	}
	c.renewed = began
	return lapsed
}

// dropLocked drops the runs held now (mayAct refuses them with why).
func (c *claims) dropLocked(why error) {
	for id := range c.live {
		c.dropped[id] = why
	}
}

// takenOver records that another process took this one for gone (it
// removed this owner's record, which it does once it has recovered the
// owner's runs): the runs held now are dropped, as after a lapse.
func (c *claims) takenOver() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(errTakenOver)
}

// Why a pass of a run whose claim was dropped may not act.
var (
	errLapsed    = errors.New("this process could not renew its lease on the run for longer than the lease (the store was unreachable), so another process may have recovered the run: the call was not made")
	errTakenOver = errors.New("another process took this one for gone (it removed this process's owner record: are the servers' clocks apart by more than the lease?) and may have recovered the run: the call was not made")
)

// mayAct reports, as an error wrapping errLapsed or errTakenOver, whether
// this process may no longer act on run id because its claim lapsed or
// was taken over (see above).
func (c *claims) mayAct(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	why := c.dropped[id]
	if why == nil && !c.renewed.IsZero() && time.Since(c.renewed) > c.lease {
		why = errLapsed
	}
	if why != nil {
		return fmt.Errorf("execution %s: %w", id, why)
	}
	return nil
}

// settling takes the stranded runs that no request holds, by id with the
// func that writes each one's end, marking them busy; done must be called
// for each.
func (c *claims) settling() map[string]func(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]func(context.Context) error{}
	for id, finish := range c.stranded {
		if c.live[id] > 0 || c.busy[id] != nil {
			continue
		}
		delete(c.stranded, id)
		c.busy[id] = make(chan struct{})
		out[id] = finish
	}
	return out
}

// recovering marks run id busy for its recovery by this process, unless
// a request holds it or it is stranded or busy: then it reports false.
// done must be called after a true.
func (c *claims) recovering(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live[id] > 0 || c.stranded[id] != nil || c.busy[id] != nil {
		return false
	}
	c.busy[id] = make(chan struct{})
	return true
}

// done ends the settling or recovery of run id. A settling that could not
// reach the store gives finish back, to be tried again (unless a newer end
// was stranded meanwhile).
func (c *claims) done(id string, finish func(context.Context) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if finish != nil && c.stranded[id] == nil {
		c.stranded[id] = finish
	}
	if ch := c.busy[id]; ch != nil {
		close(ch)
		delete(c.busy, id)
	}
}
