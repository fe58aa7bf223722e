package worker

import (
	"slices"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/google/go-cmp/cmp"
)

// TestClockCrossesThePipeCompactly: readings go as deltas, so a busy
// loop's repeated milliseconds take a byte each, and come back the same.
func TestClockCrossesThePipeCompactly(t *testing.T) {
	times := []int64{1_700_000_000_000, 1_700_000_000_000, 1_699_999_999_000, 0, -5}
	for range 10_000 {
		times = append(times, 1_700_000_000_001)
	}
	var e enc
	encodeClock(&e, sandbox.Clock{Seed: -7, Times: times})
	if len(e.b) > 10_000+40 {
		t.Errorf("%d readings take %d bytes", len(times), len(e.b))
	}
	got := decodeClock(&dec{b: e.b})
	if got.Seed != -7 || !slices.Equal(got.Times, times) {
		t.Errorf("clock changed crossing the pipe: seed %d, %d times", got.Seed, len(got.Times))
	}
}

// TestProgramCrossesThePipe: every field of a Program reaches the worker
// as it was sent.
func TestProgramCrossesThePipe(t *testing.T) {
	p := sandbox.Program{
		Code: "await weather.today({ city: 'Oslo' })",
		Globals: []sandbox.Global{
			{Name: "weather", Methods: []string{"today", "week"}, Forward: true},
			{Name: "mcp.down", Unavailable: "it did not start"},
		},
		Limits: sandbox.Limits{Timeout: 3 * time.Second, MaxStackDepth: 5, MaxCalls: 6, MaxLogBytes: 7, MaxCodeBytes: 8, MaxClockReads: 9},
		Clock:  sandbox.Clock{Seed: 42, Times: []int64{1, 2}},
		Services: []sandbox.Service{
			{Name: "search", Params: []sandbox.Param{{Name: "query", String: true}}},
			{Name: "forecast", Params: []sandbox.Param{{Name: "city", String: true}, {Name: "options"}}},
			{Name: "nothing"},
		},
	}
	e := newEnc(64)
	encodeProgram(e, p)
	d := &dec{b: e.b[frameHeader:]}
	got := decodeProgram(d)
	if d.err != nil {
		t.Fatal(d.err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("program changed crossing the pipe (-sent +received):\n%s", diff)
	}
}

// TestOutcomeAndRequestCrossThePipe: every field of an outcome and of a
// host request reaches the other side as it was sent.
func TestOutcomeAndRequestCrossThePipe(t *testing.T) {
	o := wireOutcome{
		Outcome:  sandbox.Outcome{Status: sandbox.Failed, Result: []byte(`{"a":1}`), Error: "boom", Logs: []string{"one", "", "three"}, Clock: sandbox.Clock{Seed: 3, Times: []int64{5, 4}}},
		internal: "worker trouble",
		recycle:  true,
	}
	e := newEnc(64)
	encodeOutcome(e, o)
	d := &dec{b: e.b[frameHeader:]}
	if got := decodeOutcome(d); d.err != nil || !cmp.Equal(o, got, cmp.AllowUnexported(wireOutcome{})) {
		t.Errorf("outcome changed crossing the pipe (err %v):\n%s", d.err, cmp.Diff(o, got, cmp.AllowUnexported(wireOutcome{})))
	}

	q := request{seq: 7, name: "github.issues", method: "list", data: []byte(`{"state":"open"}`), errMsg: "failed"}
	d = &dec{b: q.encode(newEnc(64)).b[frameHeader:]}
	if got := decodeRequest(d); d.err != nil || !cmp.Equal(q, got, cmp.AllowUnexported(request{})) {
		t.Errorf("request changed crossing the pipe (err %v):\n%s", d.err, cmp.Diff(q, got, cmp.AllowUnexported(request{})))
	}
}
