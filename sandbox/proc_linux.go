//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

// processSupported reports whether this OS has the process executor.
const processSupported = true

// workerSysProcAttr puts a worker in a process group of its own, so that a
// terminal's Ctrl-C reaches the parent, which stops its workers itself.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killedBySeccomp reports whether a process died of SIGSYS, the signal of
// a seccomp filter's SECCOMP_RET_KILL_PROCESS.
func killedBySeccomp(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS
}

// limitData sets the hard data-size limit of this process (RLIMIT_DATA:
// private writable mappings, which is what Go's heap and stacks are made
// of, while address space merely reserved is not counted, so Go's runtime
// works under it as it does not under RLIMIT_AS). The limit is the data
// size at start plus limit, scaled for the race detector's shadow memory.
// Past it the Go runtime cannot grow the heap and the process dies with
// "fatal error: runtime: out of memory".
func limitData(limit int64) error {
	base, err := vmDataBytes()
	if err != nil {
		return err
	}
	n := uint64(base) + uint64(limit)*raceMemoryFactor
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		return fmt.Errorf("sandbox worker: set RLIMIT_DATA to %d: %w", n, err)
	}
	return nil
}

// vmDataBytes reads VmData of /proc/self/status.
func vmDataBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("sandbox worker: %w", err)
	}
	return statusField(b, "VmData")
}

// workerPipes returns the pipes a ProcessPool gives a worker: fd 3 from
// the parent, fd 4 to it. They are made non-blocking so that Go's poller
// serves them (a blocking read would hold the only P of GOMAXPROCS=1), and
// read and written with raw system calls (internal/rawpipe).
func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	var pipes [2]*rawpipe.Pipe
	for i, fd := range []int{workerInFD, workerOutFD} {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return nil, nil, fmt.Errorf("sandbox worker: fd %d is not a pipe (a worker is started by the sandbox's process pool)", fd)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			return nil, nil, fmt.Errorf("sandbox worker: fd %d: %w", fd, err)
		}
		p, err := rawpipe.New(os.NewFile(uintptr(fd), [...]string{"sandbox-in", "sandbox-out"}[i]))
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox worker: fd %d: %w", fd, err)
		}
		pipes[i] = p
	}
	return pipes[0], pipes[1], nil
}
