package codemode

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestClockJSONIsCompactAndRoundTrips(t *testing.T) {
	var busy []int64
	for ms := int64(1_700_000_000_000); ms < 1_700_000_002_500; ms++ {
		for range 1000 { // a busy loop reads each millisecond many times
			busy = append(busy, ms)
		}
	}
	for _, c := range []Clock{
		{Seed: 7},
		{Seed: 1, Times: []int64{5}},
		{Seed: -3, Times: []int64{1_700_000_000_000, 1_700_000_000_000, 1_699_999_999_990, 1_700_000_000_100}},
		{Seed: 9, Times: busy},
	} {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Clock
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.Seed != c.Seed || !slices.Equal(back.Times, c.Times) {
			t.Errorf("round trip of %d times changed the clock", len(c.Times))
		}
		if len(c.Times) == len(busy) && len(b) > 20_000 {
			t.Errorf("2.5 million readings of 2,500 milliseconds take %d bytes", len(b))
		}
	}
}

func TestClockReadsTheOlderForm(t *testing.T) {
	var c Clock
	if err := json.Unmarshal([]byte(`{"seed":4,"times":[10,10,12]}`), &c); err != nil {
		t.Fatal(err)
	}
	if c.Seed != 4 || !slices.Equal(c.Times, []int64{10, 10, 12}) {
		t.Errorf("got %+v", c)
	}
	for _, bad := range []string{`{"runs":[1]}`, `{"runs":[1,0]}`, `{"runs":[1,-2]}`, `{"runs":[1,99999999999]}`,
		`{"runs":[0,1,0,9223372036854775807]}`} { // the total would overflow

		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
