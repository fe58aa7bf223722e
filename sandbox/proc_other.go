//go:build !linux

package sandbox

import (
	"errors"
	"io"
	"syscall"
)

// processSupported reports whether this OS has the process executor.
const processSupported = false

func workerSysProcAttr() *syscall.SysProcAttr { return nil }

func limitData(int64) error { return errors.ErrUnsupported }

func workerPipes() (in io.ReadCloser, out io.WriteCloser, err error) {
	return nil, nil, errors.ErrUnsupported
}
