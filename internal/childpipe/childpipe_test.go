package childpipe

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

func TestStartTalksToTheChild(t *testing.T) {
	cmd := exec.Command("cat")
	to, from, err := Start(cmd, func(in, out *os.File) { cmd.Stdin, cmd.Stdout = in, out })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := to.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(from).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	to.Close() // cat sees EOF: only our end of its stdin was open
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	from.Close()
}

func TestStartFailureLeavesNothingOpen(t *testing.T) {
	before := openFDs(t)
	cmd := exec.Command("/nonexistent/program")
	_, _, err := Start(cmd, func(in, out *os.File) { cmd.Stdin, cmd.Stdout = in, out })
	if err == nil || !strings.Contains(err.Error(), "nonexistent") {
		t.Fatalf("want a start error, got %v", err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd on this system")
	}
	return len(ents)
}

// A child that exits while we write to it, or in the middle of what it
// writes, is an error on our end, never a hang or a SIGPIPE that kills
// this process: a write waiting on the full pipe fails with EPIPE once its
// reader is gone, and the read sees the bytes the child wrote, then EOF
// (io.ErrUnexpectedEOF to a reader of whole frames). Both ends are read
// and written as the worker pool and the stdio connector do (rawpipe).
func TestChildThatExitsMidway(t *testing.T) {
	cmd := exec.Command("sh", "-c", "head -c 4 >/dev/null; printf half")
	to, from, err := Start(cmd, func(in, out *os.File) { cmd.Stdin, cmd.Stdout = in, out })
	if err != nil {
		t.Fatal(err)
	}
	w, r := rawpipe.Wrap(to, 0), rawpipe.Wrap(from, rawpipe.Spin)
	defer w.Close()
	defer r.Close()
	if n, err := w.Write(make([]byte, 1<<20)); !errors.Is(err, syscall.EPIPE) || n >= 1<<20 {
		t.Fatalf("Write to a child that exits = %d, %v; want EPIPE", n, err)
	}
	frame := make([]byte, 8)
	if n, err := io.ReadFull(r, frame); n != 4 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadFull = %d, %v; want 4, io.ErrUnexpectedEOF", n, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
