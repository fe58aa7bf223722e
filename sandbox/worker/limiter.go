package worker

import (
	"fmt"
	"sync"
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

// residentWatch samples a worker's resident memory while it runs a
// program, on a goroutine of its own (stopped and waited for by stop).
type residentWatch struct {
	stopCh chan struct{}
	done   sync.WaitGroup
}

// watchResident calls over once the resident memory of process pid passes
// ceiling bytes, and then stops sampling; it stops too when the memory
// can no longer be read (the process exited).
func watchResident(pid int, ceiling int64, over func()) *residentWatch {
	w := &residentWatch{stopCh: make(chan struct{})}
	w.done.Go(func() {
		t := time.NewTicker(residentEvery)
		defer t.Stop()
		for {
			n, err := residentBytes(pid)
			if err != nil {
				return
			}
			if n > ceiling {
				over()
				return
			}
			select {
			case <-w.stopCh:
				return
			case <-t.C:
			}
		}
	})
	return w
}

// stop ends the sampling and waits for it.
func (w *residentWatch) stop() {
	close(w.stopCh)
	w.done.Wait()
}
