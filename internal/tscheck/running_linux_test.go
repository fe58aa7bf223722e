package tscheck

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// logged is a slog.Handler that sends each record's message on a channel.
type logged chan string

func (l logged) Enabled(context.Context, slog.Level) bool { return true }
func (l logged) Handle(_ context.Context, r slog.Record) error {
	l <- r.Message
	return nil
}
func (l logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logged) WithGroup(string) slog.Handler      { return l }

// fifo makes a named pipe any user may open, and opens it for reading and
// writing (so that neither side's open blocks, and readers never see its
// end); it is closed when the test ends.
func fifo(t *testing.T, path string) *os.File {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// At most maxRunning checks run at once: with two checkers running, a
// third check waits (and says so) until one of them ends, and only then
// starts its checker.
func TestAtMostMaxRunningCheckersRunAtOnce(t *testing.T) {
	dir := sharedDir(t)
	started := fifo(t, filepath.Join(dir, "started"))
	gate := fifo(t, filepath.Join(dir, "gate"))
	c := fakeChecker(t, "echo start > "+filepath.Join(dir, "started")+"\nread _ < "+filepath.Join(dir, "gate")+"\nexit 0\n")
	log := make(logged, 8)
	c.log = slog.New(log)
	if cap(c.slots) != maxRunning || maxRunning != 2 {
		t.Fatalf("slots %d, maxRunning %d; the test expects 2", cap(c.slots), maxRunning)
	}

	starts := make(chan struct{}, 8)
	go func() {
		sc := bufio.NewScanner(started)
		for sc.Scan() {
			starts <- struct{}{}
		}
	}()
	var wg sync.WaitGroup
	check := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Check(context.Background(), "1", ""); err != nil {
				t.Errorf("check: %v", err)
			}
		}()
	}
	check()
	check()
	<-starts
	<-starts // two checkers run, both waiting at the gate
	check()
	select {
	case msg := <-log:
		t.Logf("the third check: %s", msg)
	case <-starts:
		t.Fatal("a third checker started while two ran")
	}
	if _, err := gate.WriteString("go\n"); err != nil { // one of the two ends
		t.Fatal(err)
	}
	<-starts // then the third starts
	if _, err := gate.WriteString("go\ngo\n"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// A check whose context ends stops its checker, and whatever the checker
// started, at once: Check returns with the context's error (the
// children held its output open: it returns once they are gone, or no
// longer waits for them).
func TestCancelStopsTheChecker(t *testing.T) {
	for name, start := range map[string]string{"a child in its group": "", "a child in a session of its own": "setsid"} {
		t.Run(name, func(t *testing.T) {
			dir := sharedDir(t)
			started := fifo(t, filepath.Join(dir, "started"))
			// The child says its pid once it runs (in a session of its own
			// with setsid), and holds the checker's output open.
			c := fakeChecker(t, start+" sh -c 'echo $$ > "+filepath.Join(dir, "started")+"; exec sleep 1000' &\nwait\n")
			pids := make(chan int, 1)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				sc := bufio.NewScanner(started)
				sc.Scan()
				pid, _ := strconv.Atoi(sc.Text())
				pids <- pid
				cancel()
			}()
			_, err := c.Check(ctx, "1", "")
			pid := <-pids
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // one that escaped the group is the test's to stop
			if err == nil || !strings.Contains(err.Error(), "cancel") {
				t.Errorf("err %v; want the check cancelled", err)
			}
		})
	}
}
