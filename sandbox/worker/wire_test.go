package worker

import (
	"slices"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestClockCrossesThePipeCompactly: readings go as deltas, so a busy
// loop's repeated milliseconds take a byte each, and come back the same.
func TestClockCrossesThePipeCompactly(t *testing.T) {
	times := []int64{1_700_000_000_000, 1_700_000_000_000, 1_699_999_999_000, 0, -5}
	for range 10_000 {
		times = append(times, 1_700_000_000_001)
	}
	var e enc
	encodeClock(&e, pass.Clock{Seed: -7, Times: times})
	if len(e.b) > 10_000+40 {
		t.Errorf("%d readings take %d bytes", len(times), len(e.b))
	}
	got := decodeClock(&dec{b: e.b})
	if got.Seed != -7 || !slices.Equal(got.Times, times) {
		t.Errorf("clock changed crossing the pipe: seed %d, %d times", got.Seed, len(got.Times))
	}
}
