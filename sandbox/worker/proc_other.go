//go:build !linux && !darwin && !windows

package worker

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Systems other than Linux, macOS and Windows have no process executor:
// NewPool and Main return errors wrapping
// errors.ErrUnsupported.

const processSupported = false

const (
	systemLimiter     = LimiterSystem
	residentSupported = false
)

func workerSysProcAttr() *syscall.SysProcAttr { return nil }

func workerDir() string { return "" }

func attachWorkerPipes(*exec.Cmd, *os.File, *os.File) {}

func limitProcess(*os.Process, int64) (func(), error) { return nil, errors.ErrUnsupported }

func residentBytes(int) (int64, error) { return 0, errors.ErrUnsupported }

func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	return nil, nil, errors.ErrUnsupported
}
