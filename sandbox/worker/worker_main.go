package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// The file descriptors of a worker's pipes (os/exec ExtraFiles start at 3).
const (
	workerInFD  = 3
	workerOutFD = 4
)

// Subcommand is the codemode-mcp binary's hidden sub-command that runs
// Main: a Pool's Command is [os.Executable(), Subcommand].
const Subcommand = "__sandbox-worker"

// EnvMemoryLimit is the environment variable that gives a worker
// process its memory limit in bytes.
const EnvMemoryLimit = "CODEMODE_SANDBOX_MEMORY_LIMIT"

// Main is the body of a worker process, which a Pool starts
// with Options.Command (for the codemode-mcp binary, its hidden
// __sandbox-worker sub-command). It runs on one OS thread's worth of Go
// (GOMAXPROCS=1), sets Go's soft memory limit from EnvMemoryLimit
// and, on Linux, the hard data-size rlimit (unless EnvLimiter says the
// parent samples instead), confines itself on Linux (no_new_privs, a
// seccomp filter, no capabilities: see hardenWorker), and serves the
// parent on its pipes (file descriptors 3 and 4; standard input and output
// on Windows) until the parent closes them. On systems other than Linux,
// macOS and Windows it returns an error wrapping errors.ErrUnsupported.
func Main(ctx context.Context, log *slog.Logger) error {
	runtime.GOMAXPROCS(1)
	var limit int64
	if s := os.Getenv(EnvMemoryLimit); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("sandbox worker: %s=%q is not a size in bytes", EnvMemoryLimit, s)
		}
		limit = n
	}
	in, out, err := workerPipes()
	if err != nil {
		return err
	}
	defer in.Close()
	defer out.Close()
	if limit > 0 {
		debug.SetMemoryLimit(limit / 100 * softLimitPercent)
		if Limiter(os.Getenv(EnvLimiter)) == LimiterSystem {
			if err := limitData(limit); err != nil {
				return err
			}
		}
	}
	if err := hardenWorker(log); err != nil {
		return err
	}
	return Serve(ctx, in, out, Config{MemoryLimit: limit, Logger: log})
}
