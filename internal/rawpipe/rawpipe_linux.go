package rawpipe

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// Pipe is one end of a pipe read and written with raw system calls (see
// the package documentation).
type Pipe struct {
	f      *os.File
	rc     syscall.RawConn
	spin   *spinner    // see Spin
	closed atomic.Bool // Close was called
}

// New returns f as a Pipe. f must be non-blocking and served by Go's
// poller (os.Pipe's ends are; os.NewFile of a descriptor already in
// non-blocking mode is too). A blocking descriptor is refused: a raw read
// would hold its thread, and a P of the scheduler, until data came.
func New(f *os.File) (*Pipe, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var flags uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno = syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}); err != nil {
		return nil, err
	}
	switch {
	case errno != 0:
		return nil, &os.PathError{Op: "fcntl", Path: f.Name(), Err: errno}
	case flags&syscall.O_NONBLOCK == 0:
		return nil, fmt.Errorf("rawpipe: %s is in blocking mode", f.Name())
	}
	return &Pipe{f: f, rc: rc, spin: newSpinner(0)}, nil
}

// SetReadDeadline makes a read waiting in the poller fail with
// os.ErrDeadlineExceeded once t has passed.
func (p *Pipe) SetReadDeadline(t time.Time) error { return p.f.SetReadDeadline(t) }

// SetWriteDeadline makes a write waiting in the poller fail with
// os.ErrDeadlineExceeded once t has passed (having written what it could).
func (p *Pipe) SetWriteDeadline(t time.Time) error { return p.f.SetWriteDeadline(t) }

// Close closes the descriptor; a read or write waiting on it ends with
// os.ErrClosed, and so does a second Close.
func (p *Pipe) Close() error {
	p.closed.Store(true)
	return p.f.Close()
}

// Read reads what the pipe holds, up to len(b), waiting in the poller
// while it is empty.
func (p *Pipe) Read(b []byte) (int, error) {
	return rawRead(p.rc, b, p.spin, func(err error) error { return p.opError("read", err) })
}

// Write writes all of b, waiting in the poller while the pipe is full.
func (p *Pipe) Write(b []byte) (int, error) {
	return rawWrite(p.rc, b, func(err error) error { return p.opError("write", err) })
}

// opError words a failed read or write (op) as *os.File does: a
// *os.PathError, whose error is os.ErrClosed when Close ended it, so that
// callers tell a Close from a failure with errors.Is(err, os.ErrClosed)
// whether they hold a Pipe or the *os.File (the poller's own error for
// it is internal to the standard library, and is not os.ErrClosed).
func (p *Pipe) opError(op string, err error) error {
	if _, errno := err.(syscall.Errno); !errno && p.closed.Load() && !errors.Is(err, os.ErrDeadlineExceeded) {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: p.f.Name(), Err: err}
}

// Conn is a TCP connection read and written with raw system calls, its
// reads polling as a Pipe's do (see Spin); its deadlines, Close and
// addresses are the *net.TCPConn's, and its descriptor stays in Go's
// poller, so a read that finds nothing waits there and a deadline or
// Close ends the wait.
type Conn struct {
	*net.TCPConn
	rc   syscall.RawConn
	spin *spinner
}

// WrapConn returns c read and written with raw system calls, its reads
// polling for up to spin before they wait (0: they wait at once), or c
// itself when its descriptor cannot be reached.
func WrapConn(c *net.TCPConn, spin time.Duration) net.Conn {
	rc, err := c.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{TCPConn: c, rc: rc, spin: newSpinner(spin)}
}

// Read reads what has arrived, up to len(b), polling (see Spin) and then
// waiting in the poller while nothing has.
func (c *Conn) Read(b []byte) (int, error) {
	return rawRead(c.rc, b, c.spin, func(err error) error { return c.opError("read", err) })
}

// Write writes all of b, waiting in the poller while the socket's send
// buffer is full.
func (c *Conn) Write(b []byte) (int, error) {
	return rawWrite(c.rc, b, func(err error) error { return c.opError("write", err) })
}

// opError words a failed read or write (op) as *net.TCPConn does: the
// poller's failures (a deadline, a Close) come worded already.
func (c *Conn) opError(op string, err error) error {
	e, ok := err.(syscall.Errno)
	if !ok {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, e)}
}

// rawRead reads what rc's descriptor holds, up to len(b), polling (when
// s says so, see Spin) and then waiting in the poller while it holds
// nothing; fail words the error of a failed read (an errno, or the
// poller's).
func rawRead(rc syscall.RawConn, b []byte, s *spinner, fail func(error) error) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	var since time.Time // when a read first found nothing
	err := rc.Read(func(fd uintptr) bool {
		n, errno = rawIO(syscall.SYS_READ, fd, b)
		if errno == syscall.EAGAIN && since.IsZero() {
			since = time.Now()
			if d := s.pollFor(); d > 0 {
				n, errno = poll(fd, b, d)
			}
		}
		return errno != syscall.EAGAIN // false: wait until readable
	})
	if err != nil {
		s.gaveUp()
		return 0, fail(err)
	}
	s.waitedSince(since)
	switch {
	case errno != 0:
		return 0, fail(errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawWrite writes all of b to rc's descriptor, waiting in the poller while
// it is full; fail words the error of a failed write (an errno, or the
// poller's).
func rawWrite(rc syscall.RawConn, b []byte, fail func(error) error) (int, error) {
	written := 0
	for written < len(b) {
		var n int
		var errno syscall.Errno
		if err := rc.Write(func(fd uintptr) bool {
			n, errno = rawIO(syscall.SYS_WRITE, fd, b[written:])
			return errno != syscall.EAGAIN // false: wait until writable
		}); err != nil {
			return written, fail(err)
		}
		switch {
		case errno != 0:
			return written, fail(errno)
		case n == 0:
			return written, io.ErrShortWrite
		}
		written += n
	}
	return written, nil
}
