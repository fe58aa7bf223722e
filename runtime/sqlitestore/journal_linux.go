package sqlitestore

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// appendRecord writes b to the end of f (opened O_APPEND). A record up to
// rawRecordLimit is written with raw write(2) calls, which do not wake
// the Go runtime's monitor thread (see journal.go): a write of a few
// hundred bytes to a regular file returns without waiting on a device.
func appendRecord(f *os.File, b []byte) error {
	if len(b) > rawRecordLimit {
		_, err := f.Write(b)
		return err
	}
	fd := f.Fd()
	for len(b) > 0 {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return &os.PathError{Op: "write", Path: f.Name(), Err: errno}
		}
		b = b[n:]
	}
	runtime.KeepAlive(f)
	return nil
}
