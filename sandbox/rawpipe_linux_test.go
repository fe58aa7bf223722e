package sandbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// rawPipePair returns the two ends of a new non-blocking pipe as rawPipes.
func rawPipePair(t *testing.T) (r, w *rawPipe) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, err := newRawPipe(os.NewFile(uintptr(fds[0]), "r"))
	if err != nil {
		t.Fatal(err)
	}
	w, err = newRawPipe(os.NewFile(uintptr(fds[1]), "w"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// TestRawPipeCarriesMoreThanThePipeHolds checks that writes wait while the
// pipe is full and reads while it is empty, and that every byte arrives in
// order, then EOF.
func TestRawPipeCarriesMoreThanThePipeHolds(t *testing.T) {
	r, w := rawPipePair(t)
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
	time.Sleep(10 * time.Millisecond) // let the writer fill the pipe and wait
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

// TestRawPipeReadDeadline checks that a read waiting for data ends when its
// deadline passes (how ServeWorker's context stops it).
func TestRawPipeReadDeadline(t *testing.T) {
	r, _ := rawPipePair(t)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = r.SetReadDeadline(time.Now())
	}()
	n, err := r.Read(make([]byte, 16))
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %d, %v; want 0, a deadline error", n, err)
	}
}

// TestRawPipeWriteToClosedReader checks that writing to a pipe nobody reads
// fails with EPIPE (and does not kill the process).
func TestRawPipeWriteToClosedReader(t *testing.T) {
	r, w := rawPipePair(t)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := w.Write([]byte("hello"))
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write = %v; want a *os.PathError wrapping EPIPE", err)
	}
}

// TestRawPipeReadAfterClose checks that reading a closed end fails rather
// than reading another descriptor.
func TestRawPipeReadAfterClose(t *testing.T) {
	r, _ := rawPipePair(t)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil || err == io.EOF {
		t.Fatalf("Read after Close = %d, %v; want an error", n, err)
	}
}
