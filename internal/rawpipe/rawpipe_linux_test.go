package rawpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// pipePair returns the two ends of a new non-blocking pipe as Pipes, the
// read end polling for spin.
func pipePair(t *testing.T, spin time.Duration) (r, w *Pipe) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, err := New(os.NewFile(uintptr(fds[0]), "r"))
	if err != nil {
		t.Fatal(err)
	}
	r.spin = newSpinner(spin)
	w, err = New(os.NewFile(uintptr(fds[1]), "w"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// TestPipeCarriesMoreThanThePipeHolds checks that writes wait while the
// pipe is full and reads while it is empty, and that every byte arrives in
// order, then EOF.
func TestPipeCarriesMoreThanThePipeHolds(t *testing.T) {
	r, w := pipePair(t, Spin)   // reads poll: most find nothing at first
	want := make([]byte, 4<<20) // many times a pipe's 64 KiB
	for i := range want {
		want[i] = byte(i * 7)
	}
	done := make(chan error, 1)
	go func() {
		n, err := w.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	waitInPoller(t, "rawpipe.(*Pipe).Write") // the writer filled the pipe and waits
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
}

// TestPipeReadDeadline checks that a read waiting for data ends when its
// deadline passes (how ServeWorker's context stops it).
func TestPipeReadDeadline(t *testing.T) {
	r, _ := pipePair(t, Spin)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := r.Read(make([]byte, 16))
		done <- result{n, err}
	}()
	waitInPoller(t, "rawpipe.(*Pipe).Read")
	_ = r.SetReadDeadline(time.Now())
	if got := <-done; got.n != 0 || !errors.Is(got.err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %d, %v; want 0, a deadline error", got.n, got.err)
	}
}

// TestPipeWriteToClosedReader checks that writing to a pipe nobody reads
// fails with EPIPE (and does not kill the process).
func TestPipeWriteToClosedReader(t *testing.T) {
	r, w := pipePair(t, 0)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := w.Write([]byte("hello"))
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write = %v; want a *os.PathError wrapping EPIPE", err)
	}
}

// TestPipeReadAfterClose checks that reading a closed end fails rather
// than reading another descriptor.
func TestPipeReadAfterClose(t *testing.T) {
	r, _ := pipePair(t, 0)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil || err == io.EOF {
		t.Fatalf("Read after Close = %d, %v; want an error", n, err)
	}
}

// TestNewRefusesBlockingDescriptor checks that a blocking descriptor is
// refused (a raw read would hold its thread) and that Wrap then falls back
// to the *os.File, which still works.
func TestNewRefusesBlockingDescriptor(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	rf, wf := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { _ = rf.Close(); _ = wf.Close() })
	if p, err := New(rf); err == nil {
		t.Fatalf("New(blocking pipe) = %v, nil; want an error", p)
	}
	if got := Wrap(rf, Spin); got != File(rf) {
		t.Fatalf("Wrap(blocking pipe) = %T; want the *os.File itself", got)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pr.Close(); _ = pw.Close() })
	for _, f := range []*os.File{pr, pw} {
		if _, ok := Wrap(f, Spin).(*Pipe); !ok {
			t.Fatalf("Wrap(os.Pipe end %s) is not a *Pipe", f.Name())
		}
	}
}

// waitInPoller waits until a goroutine whose stack holds frame waits in
// Go's poller (its state is "IO wait"): a read or write that found
// nothing to do and parked, which no sleep can promise.
func waitInPoller(t *testing.T, frame string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	fixture.Until(t, "a goroutine in "+frame+" waits in the poller", func() bool {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[IO wait") && strings.Contains(g, frame) {
				return true
			}
		}
		return false
	})
}

// TestCloseEndsBlockedWrite checks that a writer waiting on a peer that
// stopped reading (a full pipe) is ended by its owner's Close, with
// os.ErrClosed and the count of what went out before, and that a second
// Close says the end is closed rather than closing another descriptor.
func TestCloseEndsBlockedWrite(t *testing.T) {
	_, w := pipePair(t, 0) // nobody reads
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	big := make([]byte, 1<<20)
	go func() {
		n, err := w.Write(big)
		done <- result{n, err}
	}()
	waitInPoller(t, "rawpipe.(*Pipe).Write")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if !errors.Is(got.err, os.ErrClosed) || got.n <= 0 || got.n >= len(big) {
		t.Fatalf("Write = %d, %v; want the pipe's capacity written, then os.ErrClosed", got.n, got.err)
	}
	if err := w.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("second Close = %v, want os.ErrClosed", err)
	}
}

// TestEOFInTheMiddleOfAFrame checks that a writer that goes away after
// part of a message leaves the reader its bytes, then io.EOF: the framing
// above (io.ReadFull) sees io.ErrUnexpectedEOF, never a hang.
func TestEOFInTheMiddleOfAFrame(t *testing.T) {
	r, w := pipePair(t, Spin)
	if _, err := w.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 8)
	if n, err := io.ReadFull(r, frame); n != 4 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadFull = %d, %v; want 4, io.ErrUnexpectedEOF", n, err)
	}
}
