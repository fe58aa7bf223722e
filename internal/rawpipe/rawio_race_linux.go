//go:build linux && race

package rawpipe

import "syscall"

// rawIO makes one read(2) or write(2) of b on fd through the syscall
// package when the race detector is on. The detector learns from
// syscall.Read and syscall.Write that what one goroutine wrote to a
// descriptor happens before what another read from it; raw system calls
// would hide that edge, and a test whose two ends of a pipe share a
// process would report races that are not there. Everything around rawIO (the poller, EAGAIN, errors) is the same
// in both builds, so the race-enabled suite still tests it.
func rawIO(call, fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		var n int
		var err error
		if call == syscall.SYS_READ {
			n, err = syscall.Read(int(fd), b)
		} else {
			n, err = syscall.Write(int(fd), b)
		}
		switch e, _ := err.(syscall.Errno); {
		case err == nil:
			return n, 0
		case e != syscall.EINTR:
			return 0, e
		}
	}
}
