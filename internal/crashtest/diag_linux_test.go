package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// diagnose says, for a server whose call to the fixture does not come
// back, what its pipes to the fixture hold (bytes of a request the
// fixture has not read, of an answer the server has not read) and what
// the fixture's goroutines are doing (it is sent SIGQUIT; its stderr goes
// to w.fixtureStderr).
func (w *world) diagnose(serverPID int) string {
	var b strings.Builder
	fx := childOf(serverPID)
	if fx == 0 {
		return "no fixture process found under the server"
	}
	for _, fd := range []int{0, 1} {
		fmt.Fprintf(&b, "fixture (pid %d) fd %d: %s\n", fx, fd, pipeHolds(fmt.Sprintf("/proc/%d/fd/%d", fx, fd)))
	}
	_ = syscall.Kill(fx, syscall.SIGQUIT)
	for range 50 { // until it has written its stacks and exited
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/exe", fx)); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := os.ReadFile(w.fixtureStderr)
	if err != nil {
		fmt.Fprintf(&b, "fixture stderr: %v\n", err)
	}
	fmt.Fprintf(&b, "fixture stderr:\n%s", out)
	return b.String()
}

// childOf returns the pid of a child process of parent, or 0.
func childOf(parent int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ")".
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}

// pipeHolds opens the pipe a /proc/PID/fd/N link names (a new reader of
// the same pipe, which reads nothing) and says how many bytes it holds.
func pipeHolds(link string) string {
	target, err := os.Readlink(link)
	if err != nil {
		return err.Error()
	}
	f, err := os.OpenFile(link, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return target + ": " + err.Error()
	}
	defer f.Close()
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		return target + ": FIONREAD: " + e.Error()
	}
	return fmt.Sprintf("%s holds %d bytes", target, n)
}
