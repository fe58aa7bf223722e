//go:build linux && !race

package rawpipe

import (
	"syscall"
	"unsafe"
)

// rawIO makes one read(2) or write(2) of b on fd, again when interrupted,
// with syscall.RawSyscall: Go's scheduler is not told, so its monitor
// thread stays asleep (the package documentation says why that matters).
func rawIO(call, fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(call, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}
