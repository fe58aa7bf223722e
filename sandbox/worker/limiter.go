package worker

import (
	"fmt"
	"time"
)

// A Limiter is how a Pool holds a worker to its MemoryLimit
// besides the worker's own heap watchdog, which stops a program cleanly
// once its heap passes 80% of the limit but cannot see memory that is
// not heap (goroutine stacks) nor stop a single allocation in progress.
type Limiter string

const (
	// LimiterSystem is this operating system's hard limit: on Linux the
	// worker's data-size rlimit (RLIMIT_DATA), on Windows a Job Object's
	// process memory limit; on macOS, which has neither in a form Go's
	// runtime works under, it is LimiterSampling.
	LimiterSystem Limiter = ""
	// LimiterSampling is the parent sampling the resident memory of a
	// worker that runs a program (every residentEvery) and killing it
	// past its resident size at start plus the limit. It is macOS's
	// limiter; elsewhere it replaces the system's when chosen
	// (sandbox.memory_limiter: sampling).
	LimiterSampling Limiter = "sampling"
)

// EnvLimiter is the environment variable by which a pool tells its
// workers which limiter holds them.
const EnvLimiter = "CODEMODE_SANDBOX_LIMITER"

// residentEvery is the sampling period of LimiterSampling: memory written
// at several GB/s overshoots the limit by tens of MiB before the kill.
const residentEvery = 5 * time.Millisecond

// limiterFor resolves l for this operating system.
func limiterFor(l Limiter) (Limiter, error) {
	switch l {
	case LimiterSystem:
		return systemLimiter, nil
	case LimiterSampling:
		if !residentSupported {
			return "", fmt.Errorf("sandbox: limiter %q: this system's resident memory cannot be read", l)
		}
		return l, nil
	}
	return "", fmt.Errorf("sandbox: unknown limiter %q (want %q or none)", l, LimiterSampling)
}
