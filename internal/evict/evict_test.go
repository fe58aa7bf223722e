package evict

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestMakeRoomDropsWhatIsOverThenTheEarliest(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stamp := func(v int) time.Time { return at.Add(time.Duration(v) * time.Minute) }
	for _, tc := range []struct {
		name string
		max  int
		over func(int) bool
		want []string
	}{
		{"room already", 5, nil, []string{"a", "b", "c", "d"}},
		{"the earliest goes", 4, nil, []string{"a", "b", "d"}},
		{"the two earliest go", 3, nil, []string{"a", "b"}},
		{"what is over goes first", 4, func(v int) bool { return v == 4 }, []string{"b", "c", "d"}},
		{"over, then the earliest", 3, func(v int) bool { return v == 4 }, []string{"b", "d"}},
		{"no bound to meet", 0, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]int{"a": 4, "b": 3, "c": 1, "d": 2}
			dropped := MakeRoom(m, tc.max, tc.over, stamp)
			if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			for _, k := range []string{"a", "b", "c", "d"} {
				if _, kept := m[k]; kept == slices.Contains(dropped, k) {
					t.Errorf("%s: kept %v, reported dropped %v", k, kept, !kept)
				}
			}
			if len(dropped) != 4-len(m) {
				t.Errorf("dropped %v: each key once", dropped)
			}
		})
	}
}

// MakeRoom's invariants over random maps: nothing over is kept; afterwards
// one more fits (len < max) or the map is empty; and what it dropped that
// was not over is never later than what it kept (ties aside).
func TestMakeRoomInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := map[int]int{}
		for k := range rng.IntN(40) {
			m[k] = rng.IntN(20) // its stamp, in minutes; equal stamps are common
		}
		before := maps.Clone(m)
		limit, cut := rng.IntN(45), rng.IntN(25)
		over := func(v int) bool { return v >= cut }
		MakeRoom(m, limit, over, func(v int) time.Time { return time.Unix(int64(v)*60, 0) })
		if len(m) >= limit && len(m) > 0 {
			t.Fatalf("max %d: %d kept", limit, len(m))
		}
		earliestKept := 1 << 30
		for _, v := range m {
			if over(v) {
				t.Fatalf("kept %d, which is over (>= %d)", v, cut)
			}
			earliestKept = min(earliestKept, v)
		}
		for k, v := range before {
			if _, kept := m[k]; !kept && !over(v) && v > earliestKept {
				t.Fatalf("max %d: dropped %d=%d but kept a value stamped %d", limit, k, v, earliestKept)
			}
		}
	}
}

func TestMakeRoomAmongDropsOnlyTheEarliestOfTheSelected(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stamp := func(v int) time.Time { return at.Add(time.Duration(v) * time.Minute) }
	m := map[string]int{"a": 1, "b": 2, "c": 3, "x": 0, "y": 4}
	odd := func(v int) bool { return v%2 == 1 } // a and c: the earliest of all (x) is not theirs
	dropped := MakeRoomAmong(m, 2, odd, stamp)
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(dropped, []string{"a"}) || !slices.Equal(got, []string{"b", "c", "x", "y"}) {
		t.Errorf("dropped %v, kept %v; want a dropped, b c x y kept", dropped, got)
	}
	if dropped := MakeRoomAmong(m, 2, odd, stamp); len(dropped) != 0 {
		t.Errorf("with room already: dropped %v", dropped)
	}
}
