package worker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/codemode-mcp/codemode-mcp/internal/procjob"
)

// Windows: built and vetted for amd64 and arm64 by scripts/test.sh, never
// run (Go 1.26's Windows binaries do not start under the Wine this project
// is tested with). The pool and the heap watchdog are the code the Linux
// suites run; what is Windows's own is below: a worker's pipes are its
// standard input and output (Windows passes no other descriptors), it gets
// no console window and no Ctrl-C, each worker is put in a Job Object
// whose process memory limit is the hard limit and which kills it when
// the server's handle closes (the server exited, however), and a worker
// does not confine its system calls (goja gives a program none to make).

// processSupported reports whether this OS has the process executor.
const processSupported = true

// systemLimiter is what LimiterSystem means here: the Job Object.
const systemLimiter = LimiterSystem

// residentSupported reports whether residentBytes works here: no (the Job
// Object holds the limit), so LimiterSampling is refused.
const residentSupported = false

func residentBytes(int) (int64, error) { return 0, errors.ErrUnsupported }

// workerSysProcAttr starts a worker in a process group of its own (a
// console's Ctrl-C goes to the server, which stops its workers itself)
// and without a console window, which a server started by a desktop
// client would otherwise open for each worker.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW,
		HideWindow:    true,
	}
}

// workerDir is a worker's working directory: the system's, so that it
// keeps no user directory busy (Windows will not remove a directory a
// process works in).
func workerDir() string { return os.Getenv("SystemRoot") }

// attachWorkerPipes gives a worker its pipes as standard input and output.
func attachWorkerPipes(cmd *exec.Cmd, in, out *os.File) {
	cmd.Stdin, cmd.Stdout = in, out
}

// workerPipes returns the pipes a Pool gives a worker: standard
// input from the parent, standard output to it.
func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	for _, f := range []*os.File{os.Stdin, os.Stdout} {
		if t, err := windows.GetFileType(windows.Handle(f.Fd())); err != nil || t != windows.FILE_TYPE_PIPE {
			return nil, nil, fmt.Errorf("sandbox worker: %s is not a pipe (a worker is started by the sandbox's process pool)", f.Name())
		}
	}
	return os.Stdin, os.Stdout, nil
}

// jobMemoryMargin is what a worker's commit charge may be before its
// program allocates: the runtime, goja and esbuild warmed up, with room
// (a Linux worker's resident size after its warm-up is about 25 MiB).
const jobMemoryMargin = 64 << 20

// limitProcess puts the process in a Job Object of its own whose process
// memory limit (committed memory) is limit, scaled for the race detector,
// plus jobMemoryMargin: past it allocations fail and the Go runtime dies
// with "fatal error: out of memory". release closes the job, which kills
// the process if it still runs (KILL_ON_JOB_CLOSE); the system closes it
// too when this process exits.
func limitProcess(p *os.Process, limit int64) (release func(), err error) {
	return procjob.Contain(p, limit*RaceMemoryFactor+jobMemoryMargin)
}
