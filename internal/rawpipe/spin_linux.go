package rawpipe

import (
	"math"
	"sync/atomic"
	"syscall"
	"time"
)

// spinner is the polling of one descriptor's reads (its invariants are
// Spin's).
type spinner struct {
	spin time.Duration // 0: the reads never poll
	// waited is how long the last read that found nothing waited for its
	// data, in nanoseconds; MaxInt64 when it ended without data.
	waited atomic.Int64
}

// newSpinner returns the spinner of reads polling for up to spin (none
// when spin is not positive).
func newSpinner(spin time.Duration) *spinner {
	return &spinner{spin: max(spin, 0)}
}

// pollFor returns how long a read that found nothing polls: spin while
// the last such read had its data within pollWithin spins, else 0.
func (s *spinner) pollFor() time.Duration {
	if s.spin > 0 && time.Duration(s.waited.Load()) < pollWithin*s.spin {
		return s.spin
	}
	return 0
}

// pollWithin is how many spins the last wait may have taken for the next
// read to poll: 2 ms. Measured on the GET against an API taking 1 ms
// (BENCHMARKS.md), polling on its connection and on the worker's pipe
// still paid (a median of +91 against +107 µs added over 4 interleaved
// rounds with 4 spins as the limit), though the answer comes long after
// the polling ends; past 2 ms a poll is at most 5 % of the wait, and an
// API farther away than that costs no polling at all.
const pollWithin = 20

// waitedSince records the wait of a read that first found nothing at
// since; a zero since (the read found data at once) records nothing.
func (s *spinner) waitedSince(since time.Time) {
	if s.spin > 0 && !since.IsZero() {
		s.waited.Store(int64(time.Since(since)))
	}
}

// gaveUp records a read that ended without data (a deadline, a Close):
// it says nothing comes quickly, so the next read does not poll.
func (s *spinner) gaveUp() {
	if s.spin > 0 {
		s.waited.Store(math.MaxInt64)
	}
}

// poll reads fd into b again and again for up to d while it finds
// nothing, giving the CPU to other threads between reads. It returns the
// last read's outcome: EAGAIN when d passed with nothing to read.
func poll(fd uintptr, b []byte, d time.Duration) (int, syscall.Errno) {
	start := time.Now()
	for {
		syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		n, errno := rawIO(syscall.SYS_READ, fd, b)
		if errno != syscall.EAGAIN || time.Since(start) >= d {
			return n, errno
		}
	}
}
