package truncate

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A program's result can be tens of MiB of tiny values (the worker takes
// up to 64 MiB); what cutting it allocates follows the budget, not the
// input, whether the values lie flat, in many small arrays or nested deep.
func TestFitAllocatesForTheBudgetNotTheInput(t *testing.T) {
	const size = 12 << 20
	flat := "[" + strings.Repeat("0,", size/2) + "0]"
	arrays := "[" + strings.Repeat(`[0,0,0,0,0,0,0,"a"],`, size/20) + "[]]"
	objects := "[" + strings.Repeat(`{"a":{"b":[0,""]}},`, size/19) + "{}]"
	// A chain of arrays around a flat array: every level is cut.
	deep := strings.Repeat("[", 5000) + flat[1:len(flat)-1] + strings.Repeat("]", 5000)
	for _, in := range []struct {
		name string
		raw  string
	}{{"flat", flat}, {"arrays", arrays}, {"objects", objects}, {"deep", deep}} {
		for _, budget := range []int{24000, 1 << 20} {
			raw, res := json.RawMessage(in.raw), json.RawMessage(nil)
			n := allocated(func() { res, _ = Fit(raw, nil, budget) })
			if got := Size(res); got > budget || got < budget*9/10 {
				t.Errorf("%s, budget %d: result measures %d", in.name, budget, got)
			}
			// The output and the entries it can show, under a hundred
			// bytes a character of the budget, and the chain of nested
			// values, a few hundred bytes a level; the input is 12 MiB.
			if limit := uint64(96*budget + 4<<20); n > limit {
				t.Errorf("%s (%d MiB), budget %d: Fit allocated %d MB, want at most %d MB", in.name, len(in.raw)>>20, budget, n>>20, limit>>20)
			}
		}
	}
}
