//go:build unix

package worker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// waitFor waits until cond holds (checked under the pool's lock).
func waitFor(t *testing.T, pool *Pool, what string, cond func() bool) {
	t.Helper()
	fixture.Until(t, what, func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return cond()
	})
}

// TestACanceledRunDoesNotWaitForAStart: a Run that starts a worker for
// itself (none idle, none on its way for it) returns as soon as its
// context ends, not when the worker has come up or its start timed out;
// the worker, once up, goes to the pool.
func TestACanceledRunDoesNotWaitForAStart(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "hold")
	pool := newPool(t, Options{Size: 1, MaxWorkers: 3, Env: []string{envTestHold + "=" + fifo}})
	waitIdle(t, pool, 1)
	// From now on, workers are held at start until the FIFO has a writer.
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var writer *os.File
	release := func() {
		if writer == nil {
			var err error
			if writer, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil { // O_RDWR: no wait for a reader
				t.Fatal(err)
			}
		}
	}
	defer func() {
		release() // before the pool's Close, which waits for the starts
		writer.Close()
	}()

	ctx := context.Background()
	a, err := pool.acquire(ctx) // the idle worker; the starter starts another, held
	if err != nil {
		t.Fatal(err)
	}
	defer pool.release(a, true)
	waitFor(t, pool, "the starter starts a worker", func() bool { return pool.starting == 1 })
	// B waits for the starter's worker; C then starts one for itself.
	b := make(chan error, 1)
	go func() {
		w, err := pool.acquire(ctx)
		if err == nil {
			pool.release(w, true)
		}
		b <- err
	}()
	waitFor(t, pool, "B waits", func() bool { return pool.waiters == 1 })
	cctx, cancel := context.WithCancel(ctx)
	c := make(chan error, 1)
	go func() {
		_, err := pool.acquire(cctx)
		c <- err
	}()
	waitFor(t, pool, "C starts a worker", func() bool { return pool.total == 3 })
	cancel()
	if err := <-c; !errors.Is(err, context.Canceled) {
		t.Fatalf("C: %v, want canceled", err)
	}
	// C returned while its worker was still held at start (before the fix,
	// only once the start timed out and the worker was killed).
	if s := pool.Stats(); s.Total != 3 {
		t.Errorf("after C returned: %+v, want its worker still starting", s)
	}
	release()
	if err := <-b; err != nil {
		t.Fatalf("B: %v", err)
	}
	// C's worker and the starter's are both in the pool.
	waitIdle(t, pool, 2)
}

// TestCloseInterruptsAStart: Close ends a worker's start-up (held here
// for good) instead of waiting startTimeout for it. Before the fix Close
// returned only once the start timed out.
func TestCloseInterruptsAStart(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "hold")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var logs fixture.SyncBuffer
	pool, err := NewPool(Options{Command: []string{exe}, Size: 1, Env: append(slices.Clone(testWorkerEnv), envTestHold+"="+fifo),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, pool, 1)
	// From now on, workers are held at start: the FIFO never has a writer.
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := pool.acquire(context.Background()) // the starter starts another, held
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, pool, "the starter starts a worker", func() bool { return pool.starting == 1 })
	pool.release(w, true)
	_ = pool.Close()
	// A Close that waited for the held start would see it fail by its own
	// timeout (startTimeout), which the starter reports; a start that Close
	// ended is not a failure to report.
	if strings.Contains(logs.String(), "cannot start a worker") {
		t.Errorf("Close waited for the held start to time out:\n%s", logs.String())
	}
}
