package sandbox

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawPipe is a worker's end of one of its pipes to the parent, read and
// written with raw system calls (a worker's hot path: one frame each way
// per host call).
//
// Why not *os.File: a system call made through Go's syscall package wakes
// the runtime's monitor thread (sysmon) when the process was idle, and
// sysmon then polls every 20 µs for a while. A worker is idle during every
// host call, so it paid a thread wake-up and a train of timer wake-ups per
// call, on a virtual machine each a costly exit (BENCHMARKS.md). Raw calls
// on the non-blocking descriptor leave sysmon asleep; a read that finds the
// pipe empty, or a write that finds it full, still waits in Go's poller.
type rawPipe struct {
	f  *os.File
	rc syscall.RawConn
}

func newRawPipe(f *os.File) (*rawPipe, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &rawPipe{f: f, rc: rc}, nil
}

// SetReadDeadline makes a read waiting in the poller fail with
// os.ErrDeadlineExceeded once t has passed.
func (p *rawPipe) SetReadDeadline(t time.Time) error { return p.f.SetReadDeadline(t) }

// Close closes the descriptor.
func (p *rawPipe) Close() error { return p.f.Close() }

// rawIO makes one read(2) or write(2) of b on fd, again when interrupted.
func rawIO(call, fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(call, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}

// Read reads what the pipe holds, up to len(b), waiting in the poller
// while it is empty.
func (p *rawPipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	if err := p.rc.Read(func(fd uintptr) bool {
		n, errno = rawIO(syscall.SYS_READ, fd, b)
		return errno != syscall.EAGAIN // false: wait until readable
	}); err != nil {
		return 0, err
	}
	switch {
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of b, waiting in the poller while the pipe is full.
func (p *rawPipe) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		var n int
		var errno syscall.Errno
		if err := p.rc.Write(func(fd uintptr) bool {
			n, errno = rawIO(syscall.SYS_WRITE, fd, b[written:])
			return errno != syscall.EAGAIN // false: wait until writable
		}); err != nil {
			return written, err
		}
		switch {
		case errno != 0:
			return written, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
		case n == 0:
			return written, io.ErrShortWrite
		}
		written += n
	}
	return written, nil
}
