package rawpipe

import (
	"syscall"
	"time"
)

// poll reads fd into b again and again for up to d while it finds
// nothing, giving the CPU to other threads between reads (the invariants
// are Spin's). It returns the last read's outcome: EAGAIN when d passed
// with nothing to read.
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
