package rawpipe

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestPollReadsWhatComesWhilePolling checks that poll keeps reading
// while the pipe is empty and returns what a writer sends meanwhile, and
// that it gives up with EAGAIN once its time has passed.
func TestPollReadsWhatComesWhilePolling(t *testing.T) {
	r, w := pipePair(t, 0)
	fd := rawFD(t, r)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = w.Write([]byte("late"))
	}()
	b := make([]byte, 16)
	n, errno := poll(fd, b, 10*time.Second)
	if errno != 0 || string(b[:n]) != "late" {
		t.Fatalf("poll = %q, %v; want \"late\"", b[:n], errno)
	}
	start := time.Now()
	n, errno = poll(fd, b, 30*time.Millisecond)
	if n > 0 || errno != syscall.EAGAIN {
		t.Fatalf("poll of an empty pipe = %d, %v; want EAGAIN", n, errno)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("poll of an empty pipe gave up after %v, before its 30ms", waited)
	}
}

// TestPollingReadIsBounded checks Spin's bound: a read that finds nothing
// polls for its spin, once, then waits in the poller, where a deadline
// that passed during the polling ends it.
func TestPollingReadIsBounded(t *testing.T) {
	r, _ := pipePair(t, 50*time.Millisecond)
	if waited := readNothing(t, r); waited < 50*time.Millisecond {
		t.Fatalf("Read ended after %v: it did not poll for its 50ms", waited)
	}
}

// TestCloseEndsPollingRead checks that a Close made while a read polls
// ends that read (once its polling is over) with os.ErrClosed, as it ends
// a read waiting there.
func TestCloseEndsPollingRead(t *testing.T) {
	// The read is started before Close and polls for 200 ms, so
	// Close nearly always lands inside its polling; a read that Close beat
	// must end the same way, so no interleaving makes the test pass wrongly,
	// and a read that Close does not end hangs it until go test's timeout.
	r, _ := pipePair(t, 200*time.Millisecond)
	started, done := make(chan struct{}), make(chan error, 1)
	go func() {
		close(started)
		_, err := r.Read(make([]byte, 16))
		done <- err
	}()
	<-started
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close = %v; want os.ErrClosed", err)
	}
}

// readNothing reads the empty pipe r with a 1 ms deadline and returns how
// long the read took: at least the polling's time if it polled.
func readNothing(t *testing.T, r *Pipe) time.Duration {
	t.Helper()
	if err := r.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read of an empty pipe = %v; want a deadline error", err)
	}
	took := time.Since(start)
	if err := r.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	return took
}

// rawFD returns p's descriptor.
func rawFD(t *testing.T, p *Pipe) uintptr {
	t.Helper()
	var fd uintptr
	if err := p.rc.Control(func(d uintptr) { fd = d }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestPollingStopsWhileAnswersAreSlow checks that a descriptor polls only
// while answers come within its spin: after a read whose data came later,
// or that ended without data, the next read waits in the poller at once;
// after a read whose data came quickly, it polls again.
func TestPollingStopsWhileAnswersAreSlow(t *testing.T) {
	const spin = 50 * time.Millisecond
	r, w := pipePair(t, spin)
	readAfter := func(write time.Duration) {
		t.Helper()
		go func() {
			time.Sleep(write)
			_, _ = w.Write([]byte("x"))
		}()
		if n, err := r.Read(make([]byte, 1)); n != 1 || err != nil {
			t.Fatalf("Read = %d, %v; want the byte written after %v", n, err, write)
		}
	}
	readAfter((pollWithin + 1) * spin) // slower than pollWithin spins: polling stops
	if d := r.spin.pollFor(); d != 0 {
		t.Fatalf("after an answer slower than %d spins, the next read polls for %v; want it to wait at once", pollWithin, d)
	}
	readNothing(t, r) // ended without data: still no polling
	if d := r.spin.pollFor(); d != 0 {
		t.Fatalf("after a read that ended without data, the next read polls for %v; want it to wait at once", d)
	}
	readAfter(10 * time.Millisecond) // quickly: polling resumes
	if d := r.spin.pollFor(); d != spin {
		t.Fatalf("after an answer within %d spins, the next read polls for %v; want %v", pollWithin, d, spin)
	}
	if took := readNothing(t, r); took < spin {
		t.Fatalf("a read that polls for %v took %v", spin, took)
	}
}
