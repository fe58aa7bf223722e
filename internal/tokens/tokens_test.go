package tokens

import "testing"

// The o200k counts were taken with the gpt-tokenizer npm package (the
// end-to-end suite measures whole tool lists the same way).
func TestEstimate(t *testing.T) {
	tests := []struct {
		in        string
		o200k     int
		low, high int // accepted range of the estimate
	}{
		{"", 0, 0, 0},
		{"hello", 1, 1, 1},
		{"declare const github: { issues_create(input: { owner: string }): Promise<unknown>; };", 19, 19, 27},
		{"Create an issue for the authenticated user", 7, 7, 9},
		{"getSumOfTwoNumbers", 5, 5, 6},
		{"1234567", 3, 3, 3},
		{"\n    /** A note. */\n", 7, 6, 10},
	}
	for _, tc := range tests {
		if got := Estimate(tc.in); got < tc.low || got > tc.high {
			t.Errorf("Estimate(%q) = %d, want %d..%d (o200k: %d)", tc.in, got, tc.low, tc.high, tc.o200k)
		}
	}
}

func TestEstimateGrowsWithText(t *testing.T) {
	a := Estimate("List repository issues")
	b := Estimate("List repository issues. List repository issues.")
	if b <= a {
		t.Errorf("longer text estimated %d, not more than %d", b, a)
	}
}
