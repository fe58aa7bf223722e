package childpipe

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
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
