//go:build linux || darwin

package worker

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

// processSupported reports whether this OS has the process executor.
const processSupported = true

// limitProcess is the parent's part of LimiterSystem: nothing here (on
// Linux the worker sets its own rlimit, on macOS the parent samples).
func limitProcess(*os.Process, int64) (release func(), err error) { return func() {}, nil }

// workerSysProcAttr puts a worker in a process group of its own, so that a
// terminal's Ctrl-C reaches the parent, which stops its workers itself.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// workerDir is a worker's working directory: the root, so that nothing is
// relative to the server's directory and no directory is kept busy.
func workerDir() string { return "/" }

// attachWorkerPipes gives a worker its pipes as fds 3 and 4 (ExtraFiles).
func attachWorkerPipes(cmd *exec.Cmd, in, out *os.File) {
	cmd.ExtraFiles = []*os.File{in, out}
}

// workerPipes returns the pipes a Pool gives a worker: fd 3 from
// the parent, fd 4 to it. They are made non-blocking so that Go's poller
// serves them (a blocking read would hold the only P of GOMAXPROCS=1), and
// on Linux read and written with raw system calls (internal/rawpipe).
func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	var pipes [2]rawpipe.File
	for i, fd := range []int{workerInFD, workerOutFD} {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return nil, nil, fmt.Errorf("sandbox worker: fd %d is not a pipe (a worker is started by the sandbox's process pool)", fd)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			return nil, nil, fmt.Errorf("sandbox worker: fd %d: %w", fd, err)
		}
		pipes[i] = rawpipe.Wrap(os.NewFile(uintptr(fd), [...]string{"sandbox-in", "sandbox-out"}[i]), 0) // the worker does not poll (rawpipe.Spin)
	}
	return pipes[0], pipes[1], nil
}
