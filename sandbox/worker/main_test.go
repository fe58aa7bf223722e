package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"go.uber.org/goleak"
)

// envTestWorker makes the test binary a worker process (see newPool).
const envTestWorker = "CODEMODE_SANDBOX_TEST_WORKER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envTestWorker); mode != "" {
		if hold := os.Getenv(envTestHold); hold != "" {
			// Blocks while hold is a FIFO with no writer.
			if f, err := os.Open(hold); err == nil {
				f.Close()
			}
		}
		run := func() error { return Main(context.Background(), slog.New(slog.NewTextHandler(os.Stderr, nil))) }
		if mode != "1" {
			run = func() error { return fakeWorker(mode) }
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { fixture.RemoveBinaries() }))
}

// envTestHold names a path a test worker opens before it starts: while
// it is a FIFO that no one has opened for writing, the worker's start-up
// is held.
const envTestHold = "CODEMODE_SANDBOX_TEST_HOLD"

// fakeWorker is a worker that breaks the protocol as script
// (envTestWorker's value) says, one step at a time: "call:ID:SEQ" asks
// for notes.listNotes as request ID with SEQ, "reply" reads one frame (a
// reply), "outcome" reports a completed outcome, "internal:N" an internal
// failure N MiB long; the program is never
// run. It then reads until the parent closes the pipe.
func fakeWorker(script string) error {
	in, out, err := workerPipes()
	if err != nil {
		return err
	}
	fw, fr := &frameWriter{w: out}, newFrameReader(in)
	if err := fw.write(msgHello, 0, newEnc(0)); err != nil {
		return err
	}
	_, run, _, err := fr.read() // msgRun
	if err != nil {
		return err
	}
	for _, step := range strings.Fields(script) {
		switch f := strings.Split(step, ":"); f[0] {
		case "call":
			id, _ := strconv.Atoi(f[1])
			seq, _ := strconv.Atoi(f[2])
			call := request{seq: seq, name: "notes", method: "listNotes", data: []byte("{}")}
			err = fw.write(msgCall, uint32(id), call.encode(newEnc(64)))
		case "reply":
			_, _, _, err = fr.read()
		case "outcome":
			e := newEnc(64)
			encodeOutcome(e, wireOutcome{Outcome: sandbox.Outcome{Status: sandbox.Completed, Result: []byte("1")}})
			err = fw.write(msgOutcome, run, e)
		case "internal": // an internal failure whose text is f[1] MiB long
			n, _ := strconv.Atoi(f[1])
			e := newEnc(n<<20 + 64)
			encodeOutcome(e, wireOutcome{Outcome: sandbox.Outcome{Status: sandbox.Failed, Error: "internal error"}, internal: strings.Repeat("x", n<<20), recycle: true})
			err = fw.write(msgOutcome, run, e)
		default:
			return fmt.Errorf("bad fake worker step %q", step)
		}
		if err != nil {
			return nil // the parent is gone
		}
	}
	for {
		if _, _, _, err := fr.read(); err != nil {
			return nil
		}
	}
}

// newExecutor returns an in-process executor, to compare the pool with,
// closed when the test ends.
func newExecutor(t testing.TB) *pass.InProcess {
	return sandboxtest.Closed(t, pass.NewInProcess(pass.InProcessOptions{}))
}
