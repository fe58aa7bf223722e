package mcp

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A stdio server ends when the process that started it is killed with
// SIGKILL, which leaves it no time to stop its children, even a server
// that does not end when its input does (-linger): the kernel sends it
// the parent-death signal.
func TestAStdioServerDiesWithUs(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+fixture.MCPServer(t))
	helper.Stderr = os.Stderr
	stdin, err := helper.StdinPipe() // kept open: the helper waits until we kill it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("the helper printed no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the helper printed %q", line)
	}
	// A pidfd names the server for good (its pid could be reused) and
	// becomes readable when it ends.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(pidfd)

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int((20 * time.Second).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("poll the server's pidfd: %v", err)
		}
		if n == 0 {
			_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
			t.Fatalf("the server (pid %d) still runs 20 s after the process that started it was killed", pid)
		}
		return
	}
}

// A stdio server gets its standard streams and nothing else of ours, not
// even a descriptor we hold without close-on-exec.
func TestAStdioServerGetsOnlyItsDescriptors(t *testing.T) {
	leaked := fixture.LeakDescriptor(t)
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	pid := childPID(t, c)
	files := fixture.OpenFiles(t, pid)
	for fd, target := range files {
		if target == leaked {
			t.Errorf("the server holds descriptor %d: %s", fd, target)
		}
	}
	for fd := range 3 {
		if !strings.HasPrefix(files[fd], "pipe:") {
			t.Errorf("the server's descriptor %d is %q, want a pipe", fd, files[fd])
		}
	}
}
