//go:build !linux

package worker

import (
	"log/slog"
	"os"
)

// Off Linux a worker neither confines itself (there is no seccomp, and
// goja gives a program no system call to make) nor sets its data-size
// limit: the parent holds its memory limit (a Job Object, or sampling).

func killedBySeccomp(*os.ProcessState) bool { return false }

func limitData(int64) error { return nil }

func hardenWorker(*slog.Logger) error { return nil }
