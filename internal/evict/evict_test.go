package evict

import (
	"maps"
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
