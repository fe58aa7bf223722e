package mcp

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/childpipe"
)

// Shutdown grace periods of a stdio server: after its stdin closes it has
// stopGrace to exit, then termGrace after SIGTERM before SIGKILL.
const (
	stopGrace = 2 * time.Second
	termGrace = 3 * time.Second
)

// waitDelay bounds how long reaping a stdio child waits for its stderr to
// close after it exits (a grandchild may hold it open).
const waitDelay = 2 * time.Second

// A process is the child of a stdio server. The connector owns it: one
// goroutine reaps it and records how it ended, so an exit is noticed at
// once, whether or not a call is in flight.
type process struct {
	cmd     *exec.Cmd
	stdin   *os.File     // our end of the child's stdin
	stdout  *os.File     // our end of the child's stdout
	release func() error // kills what is left of the child's process group or job (see contain)
	stderr  *lineLogger  // the child's stderr, logged and its last lines kept

	exited   chan struct{} // closed once the child has been reaped (cmd.ProcessState set)
	exitedAt time.Time     // set before exited is closed

	stopOnce  sync.Once
	stopErr   error
	stoppedAt atomic.Pointer[time.Time] // when stop began; nil before
}

// startProcess starts cfg's command with its stdin and stdout on pipes and
// its stderr logged to logger, line by line. onExit runs (on the reaping
// goroutine) once the child has been reaped.
//
// One goroutine forks the child and reaps it, locked to its OS thread
// from before the fork until the child is reaped: on Linux the child's
// parent-death signal (childAttr) follows the thread that forked it, and
// this keeps that thread alive, and out of the hands of any other
// goroutine (one that locked it and ended would end it), for as long as
// the child runs.
func startProcess(cfg *Config, logger *slog.Logger, onExit func()) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = childEnv(cfg, os.Environ())
	cmd.WaitDelay = waitDelay
	cmd.SysProcAttr = childAttr()

	p := &process{cmd: cmd, exited: make(chan struct{}), stderr: newLineLogger(logger, cfg.Scrubber)}
	cmd.Stderr = p.stderr // not a pipe we read: exec copies it and Wait waits for the copy
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // the child is gone: nothing is left to signal
		inW, outR, err := childpipe.Start(cmd, func(in, out *os.File) { cmd.Stdin, cmd.Stdout = in, out })
		if err == nil {
			p.stdin, p.stdout = inW, outR
			if p.release, err = contain(cmd.Process); err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				inW.Close()
				outR.Close()
			}
		}
		started <- err
		if err != nil {
			return
		}
		_ = cmd.Wait() // how it ended is in cmd.ProcessState
		p.exitedAt = time.Now()
		close(p.exited)
		onExit()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start the server: %w", err)
	}
	return p, nil
}

// pid returns the child's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// hasExited reports whether the child has been reaped.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitedOnItsOwn reports whether the child exited before stop began.
func (p *process) exitedOnItsOwn() bool {
	if !p.hasExited() {
		return false
	}
	stopped := p.stoppedAt.Load()
	return stopped == nil || p.exitedAt.Before(*stopped)
}

// status describes how the child ended, e.g. "status 3" or "signal:
// killed"; "" while it runs, and for no process (a session's that is not
// stdio).
func (p *process) status() string {
	if p == nil || !p.hasExited() || p.cmd.ProcessState == nil {
		return ""
	}
	if code := p.cmd.ProcessState.ExitCode(); code >= 0 {
		return fmt.Sprintf("status %d", code)
	}
	return p.cmd.ProcessState.String()
}

// stop ends the child: its stdin is closed, then SIGTERM after stopGrace
// and SIGKILL after termGrace; once it is reaped, what is left of its
// process group (its job, on Windows) is killed and our end of its stdout
// closed (which ends the transport's reader even if a grandchild holds
// the pipe). It is safe to call more than once and concurrently.
func (p *process) stop(logger *slog.Logger) error {
	p.stopOnce.Do(func() {
		start := time.Now()
		p.stoppedAt.Store(&start)
		var errs []error
		if err := p.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("close stdin: %w", err))
		}
		if !p.waitExit(stopGrace) {
			logger.Debug("server did not exit after its stdin closed; sending SIGTERM", "pid", p.pid())
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			if !p.waitExit(termGrace) {
				logger.Debug("server did not exit after SIGTERM; killing it", "pid", p.pid())
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		p.stderr.Flush() // reaped: exec has copied all of its stderr
		if err := p.release(); err != nil {
			errs = append(errs, err)
		}
		if err := p.stdout.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("close stdout: %w", err))
		}
		logger.Debug("server process stopped", "status", p.status(), "after", time.Since(start).Round(time.Millisecond))
		p.stopErr = errors.Join(errs...)
	})
	return p.stopErr
}

// waitExit waits up to d for the child to be reaped.
func (p *process) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}
