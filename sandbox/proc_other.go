//go:build !linux

package sandbox

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// processSupported reports whether this OS has the process executor.
const processSupported = false

func workerSysProcAttr() *syscall.SysProcAttr { return nil }

func limitData(int64) error { return errors.ErrUnsupported }

func hardenWorker() error { return errors.ErrUnsupported }

func killedBySeccomp(*os.ProcessState) bool { return false }

func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	return nil, nil, errors.ErrUnsupported
}
