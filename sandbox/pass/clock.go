package pass

import (
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"math/rand/v2"
	"slices"
	"time"
)

// init makes the process's local time zone UTC. goja's Date takes its
// local time (getHours, toString, toLocaleString, new Date(y, m, d),
// Date.parse of a string without a zone) from time.Local and has no
// setting per runtime: local time that followed the server's TZ would
// differ between a pass and its replay after a restart under another zone,
// and a program branching on it would diverge. Every process that runs
// programs imports this package, worker processes too.
func init() { time.Local = time.UTC }

// clockState replays time and randomness for one pass. It is used only on
// the VM goroutine.
type clockState struct {
	seed  int64
	times []int64 // the input's times, then every new read
	reads int
	rng   *rand.Rand
	// steps says whether a codemode.step function is running: its reads
	// are neither replayed nor recorded (the step's value is).
	steps *stepContext
	// max bounds the reads (Limits.MaxClockReads); the read past it calls
	// over, which ends the pass.
	max  int
	over func(reads int)
}

func newClockState(c sandbox.Clock) *clockState {
	s := uint64(c.Seed)
	return &clockState{
		seed:  c.Seed,
		times: slices.Clone(c.Times),
		rng:   rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)),
	}
}

// Now is goja's time source: the n-th read returns the n-th recorded time,
// or the wall clock (to the millisecond, which is all Date keeps), recorded.
func (c *clockState) Now() time.Time {
	if c.steps.current() != nil {
		return time.UnixMilli(time.Now().UnixMilli())
	}
	n := c.reads
	if n >= c.max {
		if n == c.max {
			c.reads++
			c.over(n)
		}
		return time.UnixMilli(c.times[len(c.times)-1])
	}
	c.reads++
	if n < len(c.times) {
		return time.UnixMilli(c.times[n])
	}
	ms := time.Now().UnixMilli()
	c.times = append(c.times, ms)
	return time.UnixMilli(ms)
}

// Random is goja's random source. Inside a step it is not the replayed
// sequence (and not deterministic).
func (c *clockState) Random() float64 {
	if c.steps.current() != nil {
		return rand.Float64()
	}
	return c.rng.Float64()
}

// Clock returns the pass's clock: the seed and every time value.
func (c *clockState) Clock() sandbox.Clock {
	return sandbox.Clock{Seed: c.seed, Times: slices.Clone(c.times)}
}
