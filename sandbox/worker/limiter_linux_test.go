package worker

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
)

// TestSamplingLimiter runs macOS's limiter here, with RLIMIT_DATA off in
// the workers: a memory bomb and single 4 GiB allocations end as "memory
// limit exceeded", the pool replaces the worker and runs the next program,
// and memory that the heap watchdog cannot see (goroutine stacks) is
// stopped by the parent's sampling alone.
func TestSamplingLimiter(t *testing.T) {
	logs := &fixture.SyncBuffer{}
	p := newPool(t, Options{Size: 1, MemoryLimit: hostileMemoryLimit, Limiter: LimiterSampling,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	checkDataLimit := func(t *testing.T) {
		t.Helper()
		for _, pid := range p.Stats().PIDs {
			if limit := dataLimit(t, pid); limit != "unlimited" {
				t.Errorf("worker %d has a data-size limit: %s", pid, limit)
			}
		}
	}
	checkDataLimit(t)
	rss := startRSSWatch(t)
	long := sandbox.Limits{Timeout: 90 * time.Second} // see hostileCases
	for _, tc := range []struct {
		name, code string
		sampled    bool // only the parent's sampling can stop it: it kills the worker
	}{
		{name: "memory bomb", code: "let a = []; while (true) a.push('x'.repeat(1e6) + a.length)"},
		{name: "4 GiB string", code: "'x'.repeat(2 ** 32).length"},
		{name: "4 GiB typed array", code: "new Uint8Array(2 ** 32).fill(1).length"},
		{name: "deep native recursion (stack, not heap)", code: "eval('['.repeat(1e7))", sampled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := len(logs.String()) // what earlier cases logged
			start := time.Now()
			memoryExceeded(t, sandboxtest.Run(t, p, &sandboxtest.Host{}, tc.code, long))
			t.Logf("stopped after %v", time.Since(start).Round(time.Millisecond))
			if logged := logs.String()[seen:]; tc.sampled && !strings.Contains(logged, `exit="signal: killed"`) {
				t.Errorf("the parent did not kill the worker; log:\n%s", logged)
			}
			sandboxtest.WantCompleted(t, "the next run", sandboxtest.Run(t, p, &sandboxtest.Host{}, "(await notes.createNote({ n: 2 })).args.n * 21", sandbox.Limits{}), "42")
			checkDataLimit(t)
		})
	}
	if peak := rss.stop(); peak > maxRSS {
		t.Errorf("peak resident memory of the test process and its workers: %d MiB, limit %d MiB", peak>>20, maxRSS>>20)
	} else {
		t.Logf("peak resident memory of the test process and its workers: %d MiB", peak>>20)
	}
}

// TestSystemLimiter checks that the default limiter is the workers'
// RLIMIT_DATA: the limit plus what the worker had mapped at start.
func TestSystemLimiter(t *testing.T) {
	p := newPool(t, Options{Size: 1, MemoryLimit: hostileMemoryLimit})
	for _, pid := range p.Stats().PIDs {
		limit := dataLimit(t, pid)
		n, err := strconv.ParseInt(limit, 10, 64)
		if err != nil || n < hostileMemoryLimit*RaceMemoryFactor || n > hostileMemoryLimit*RaceMemoryFactor+4<<30 {
			t.Errorf("worker %d: data-size limit %s, want the limit plus the data size at start", pid, limit)
		}
	}
}

// dataLimit returns the hard data-size limit of process pid as
// /proc/PID/limits gives it ("unlimited", or bytes).
func dataLimit(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max data size ") && len(f) == 6 {
			return f[4] // Max data size SOFT HARD UNITS
		}
	}
	t.Fatalf("no data-size line in /proc/%d/limits:\n%s", pid, b)
	return ""
}
