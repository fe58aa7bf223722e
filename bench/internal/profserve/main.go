// Command profserve is codemode-mcp with a CPU profile, for finding where a
// benchmark's time goes inside the server process. It runs the same command
// line as cmd/codemode-mcp; when $CODEMODE_CPUPROFILE names a directory, it
// writes cpu-<pid>.pprof there on a clean exit (stdin closed or SIGTERM).
//
// The bench package builds it instead of cmd/codemode-mcp when its
// -server.cpuprofile flag is set.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

func main() {
	stop, err := startProfile(os.Getenv("CODEMODE_CPUPROFILE"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "profserve: %v\n", err)
		os.Exit(cli.ExitFailure)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	cancel()
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "profserve: %v\n", err)
	}
	os.Exit(code)
}

// startProfile starts a CPU profile into dir/cpu-<pid>.pprof; with dir
// empty it does nothing. The returned function stops and writes it.
func startProfile(dir string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("create profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("write profile: %w", err)
		}
		return nil
	}, nil
}
