package worker

import (
	"bytes"
	"context"
	"io"
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

	// A status outside the three is malformed, not an outcome.
	e = newEnc(64)
	encodeOutcome(e, wireOutcome{Outcome: sandbox.Outcome{Status: 0, Result: []byte("1")}})
	if d = (&dec{b: e.b[frameHeader:]}); decodeOutcome(d).Status != 0 || d.err == nil {
		t.Errorf("an outcome with status 0 decoded without an error")
	}

	q := request{seq: 7, name: "github.issues", method: "list", data: []byte(`{"state":"open"}`), errMsg: "failed"}
	d = &dec{b: q.encode(newEnc(64)).b[frameHeader:]}
	if got := decodeRequest(d); d.err != nil || !cmp.Equal(q, got, cmp.AllowUnexported(request{})) {
		t.Errorf("request changed crossing the pipe (err %v):\n%s", d.err, cmp.Diff(q, got, cmp.AllowUnexported(request{})))
	}
}

// TestTooLargeForAFrame: a value past the 64 MiB frame limit is refused
// with an error naming it, on each side of the pipe, before it is copied
// into a frame (tooLarge is zero pages the test never touches).
func TestTooLargeForAFrame(t *testing.T) {
	tooLarge := make([]byte, maxFrame+1)
	ctx := context.Background()
	t.Run("worker", func(t *testing.T) {
		h := &pipeHost{fw: &frameWriter{w: io.Discard}, pending: map[uint32]chan reply{}}
		_, err := h.Call(ctx, sandbox.Call{Seq: 1, Connector: "notes", Method: "createNote", Args: tooLarge})
		wantErr(t, err, "notes.createNote: the arguments are too large to send: 67108865 bytes, limit 64 MiB")
		_, err = h.Service(ctx, sandbox.ServiceCall{Seq: 2, Name: "search", Args: tooLarge})
		wantErr(t, err, "codemode.search: the arguments are too large to send: 67108865 bytes, limit 64 MiB")
		err = h.StepDone(ctx, sandbox.Step{Seq: 3, Name: "fetch"}, tooLarge, "")
		wantErr(t, err, `codemode.step("fetch"): the value is too large to record: 67108865 bytes, limit 64 MiB`)
	})
	t.Run("reply", func(t *testing.T) {
		var b bytes.Buffer
		r := &procRun{w: &procWorker{fw: &frameWriter{w: &b}}}
		r.reply(7, replyOf(false, tooLarge, nil))
		kind, id, payload, err := newFrameReader(&b).read()
		if err != nil || kind != msgReply || id != 7 {
			t.Fatalf("frame %d %d, %v; want the reply to 7", kind, id, err)
		}
		d := &dec{b: payload}
		wantErr(t, decodeReply(d).err(), "the value returned is too large for the sandbox: 67108865 bytes, limit 64 MiB")
	})
	t.Run("outcome", func(t *testing.T) {
		var b bytes.Buffer
		s := &workerServer{fw: &frameWriter{w: &b}}
		if err := s.sendOutcome(3, wireOutcome{Outcome: sandbox.Outcome{Status: sandbox.Completed, Result: tooLarge}}); err != nil {
			t.Fatal(err)
		}
		kind, id, payload, err := newFrameReader(&b).read()
		if err != nil || kind != msgOutcome || id != 3 {
			t.Fatalf("frame %d %d, %v; want the outcome of 3", kind, id, err)
		}
		o := decodeOutcome(&dec{b: payload})
		if want := "the program's value and logs are too large to return: 67108865 bytes, limit 64 MiB"; o.Status != sandbox.Failed || o.Error != want {
			t.Errorf("outcome %v %q, want failed: %s", o.Status, o.Error, want)
		}
	})
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
