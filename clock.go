package codemode

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Clock's JSON form is compact, since a program may read the clock very
// often (a busy loop reads the same millisecond thousands of times): the
// times are run-length and delta encoded as one flat array of pairs,
// "runs": [t0, n0, d1, n1, …], meaning n0 readings of t0, then n1 readings
// of t0+d1, and so on. The older form, "times": [t0, t1, …], is still read.

type clockJSON struct {
	Seed  int64   `json:"seed"`
	Runs  []int64 `json:"runs,omitempty"`
	Times []int64 `json:"times,omitempty"`
}

// MarshalJSON writes the compact form.
func (c Clock) MarshalJSON() ([]byte, error) {
	out := clockJSON{Seed: c.Seed}
	var last int64
	for i, t := range c.Times {
		if i > 0 && t == last {
			out.Runs[len(out.Runs)-1]++
			continue
		}
		d := t
		if i > 0 {
			d = t - last
		}
		out.Runs = append(out.Runs, d, 1)
		last = t
	}
	return json.Marshal(out)
}

// maxClockReadings bounds what UnmarshalJSON expands, so a corrupt or
// hostile record cannot make it allocate without limit.
const maxClockReadings = 1 << 24

// UnmarshalJSON reads the compact form or the older list of times.
func (c *Clock) UnmarshalJSON(b []byte) error {
	var in clockJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	c.Seed, c.Times = in.Seed, in.Times
	if len(in.Runs) == 0 {
		return nil
	}
	if len(in.Runs)%2 != 0 {
		return errors.New("clock: runs must be pairs of a time and a count")
	}
	var t, total int64
	for i := 0; i < len(in.Runs); i += 2 {
		n := in.Runs[i+1]
		if n < 1 || n > maxClockReadings-total { // (total+n could overflow)
			return fmt.Errorf("clock: bad run length %d", n)
		}
		total += n
	}
	c.Times = make([]int64, 0, total)
	for i := 0; i < len(in.Runs); i += 2 {
		t += in.Runs[i] // the first time, then each delta
		for range in.Runs[i+1] {
			c.Times = append(c.Times, t)
		}
	}
	return nil
}
