package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// computeWindow is how long BenchmarkServerWhileProgramComputes watches the
// server while its program computes.
const computeWindow = 10 * time.Second

// BenchmarkServerWhileProgramComputes runs a CPU-bound program (no host
// calls) in a sandbox worker for about computeWindow plus a margin, and
// reports how often the codemode-mcp server process is scheduled
// meanwhile: the context switches of all its threads (voluntary and not,
// from /proc/PID/task/*/status) per second, counted over the window. A
// server that waits for nothing but the worker's outcome should be
// asleep; a periodic timer shows up here as hundreds of switches a
// second. The program's loop is sized from a calibration run, since the
// sandbox's clock is deterministic and a program cannot read real time.
func BenchmarkServerWhileProgramComputes(b *testing.B) {
	fx := fixture.MCPServer(b)
	cm := startPeer(b, serverEnv(), codemodeBinary(b), "serve", "--config", writeConfig(b, fx, "process", ""))
	ctx := context.Background()
	loop := func(n int) string {
		return fmt.Sprintf("async () => { let x = 0; for (let i = 0; i < %d; i++) x = (x + i) %% 1000003; return x >= 0 }", n)
	}
	// Calibrate: the loop's speed in this worker.
	const probe = 2_000_000
	start := time.Now()
	if res, err := cm.run(ctx, loop(probe)); err != nil || string(res) != "true" {
		b.Fatalf("calibration run: %s, %v", res, err)
	}
	perIter := time.Since(start) / probe
	n := int((computeWindow + 3*time.Second) / max(perIter, time.Nanosecond))
	pid := cm.cmd.Process.Pid

	b.ResetTimer()
	for range b.N {
		done := make(chan error, 1)
		go func() {
			res, err := cm.run(ctx, loop(n))
			if err == nil && string(res) != "true" {
				err = fmt.Errorf("loop returned %s", res)
			}
			done <- err
		}()
		// Skip the run's start (request, record, program sent), then count.
		time.Sleep(time.Second)
		before, err := contextSwitches(pid)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		select {
		case err := <-done:
			b.Fatalf("the program ended before the window: %v (sized %d iterations)", err, n)
		case <-time.After(computeWindow):
		}
		after, err := contextSwitches(pid)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(t0)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(after-before)/elapsed.Seconds(), "server-switches/s")
	}
}

// contextSwitches sums the voluntary and involuntary context switches of
// every thread of process pid.
func contextSwitches(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("threads of process %d: %v", pid, err)
	}
	var total int64
	for _, t := range tasks {
		f, err := os.Open(t)
		if err != nil {
			continue // the thread exited
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			k, v, ok := strings.Cut(s.Text(), ":")
			if !ok || (k != "voluntary_ctxt_switches" && k != "nonvoluntary_ctxt_switches") {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				f.Close()
				return 0, fmt.Errorf("%s: %s: %w", t, k, err)
			}
			total += n
		}
		f.Close()
	}
	return total, nil
}
