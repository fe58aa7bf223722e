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
			// Blocks while hold is a FIFO with no writer (see holdStarts).
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

// fakeWorker is a worker that breaks the protocol, as script (envTestWorker's
// value) says: "await:" or "no-await:" and the seqs of the connector calls
// it asks for, in turn, before it reports a completed outcome without
// running the program; "await" waits for each call's reply, "no-await"
// does not (a real worker's outcome follows the replies to all its
// requests). It then reads until the parent closes the pipe.
func fakeWorker(script string) error {
	await, seqs, ok := strings.Cut(script, ":")
	if !ok {
		return fmt.Errorf("bad fake worker script %q", script)
	}
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
	for i, s := range strings.Split(seqs, ",") {
		seq, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		call := request{seq: seq, name: "notes", method: "listNotes", data: []byte("{}")}
		if err := fw.write(msgCall, uint32(i+1), call.encode(newEnc(64))); err != nil {
			return err
		}
		if await == "await" {
			if _, _, _, err := fr.read(); err != nil { // the reply
				return nil
			}
		}
	}
	e := newEnc(64)
	encodeOutcome(e, wireOutcome{Outcome: sandbox.Outcome{Status: sandbox.Completed, Result: []byte("1")}})
	if err := fw.write(msgOutcome, run, e); err != nil {
		return err
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
