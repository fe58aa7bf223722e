//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

// processSupported reports whether this OS has the process executor.
const processSupported = false

func workerSysProcAttr() *syscall.SysProcAttr { return nil }

func limitData(int64) error { return errors.ErrUnsupported }

func workerPipes() (in, out *os.File, err error) { return nil, nil, errors.ErrUnsupported }
