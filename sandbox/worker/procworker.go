package worker

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/childpipe"
	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

// procWorker is one worker process seen from the parent. It is used by one
// Run at a time (or by the pool while idle).
type procWorker struct {
	// fixed at start
	cmd    *exec.Cmd
	pid    int
	toW    *os.File // the parent's end of the worker's fd 3
	fromW  *os.File // the parent's end of the worker's fd 4
	fw     *frameWriter
	fr     *frameReader
	stderr *stderrTail
	exited chan struct{} // closed once the process has been waited for

	waitErr error // the exit status; read after exited is closed
	// resident is the ceiling of the worker's resident memory under
	// LimiterSampling (0: not sampled).
	resident int64

	runs int // the runs it served; changed by the pool under its mu
}

// start starts a worker process and waits for its hello. The goroutine
// waiting for the process is owned by p.procs.
func (p *Pool) start() (*procWorker, error) {
	opts, command := p.opts, p.opts.Command
	tail := &stderrTail{log: p.log}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = p.env
	cmd.Dir = workerDir()
	cmd.Stderr = tail
	cmd.SysProcAttr = workerSysProcAttr()
	cmd.WaitDelay = stopTimeout
	inW, outR, err := childpipe.Start(cmd, func(in, out *os.File) { attachWorkerPipes(cmd, in, out) })
	if err != nil {
		return nil, fmt.Errorf("sandbox: start worker %s: %w", command[0], err)
	}
	release := func() {}
	if opts.Limiter == LimiterSystem {
		if release, err = limitProcess(cmd.Process, opts.MemoryLimit); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			inW.Close()
			outR.Close()
			return nil, fmt.Errorf("sandbox: worker %s: memory limit: %w", command[0], err)
		}
	}
	w := &procWorker{
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		toW:    inW,
		fromW:  outR,
		fw:     &frameWriter{w: rawpipe.Wrap(inW, 0)},
		fr:     newFrameReader(rawpipe.Wrap(outR, rawpipe.Spin)),
		stderr: tail,
		exited: make(chan struct{}),
	}
	tail.mu.Lock()
	tail.pid = w.pid // its stderr may already be copied in
	tail.mu.Unlock()
	p.procs.Go(func() {
		w.waitErr = cmd.Wait()
		release()
		close(w.exited)
	})
	// A start ends at its timeout or at the pool's Close, which would
	// otherwise wait startTimeout for a worker slow to come up.
	t := time.AfterFunc(startTimeout, w.kill)
	stopClose := p.gate.AfterClose(w.kill)
	kind, _, _, err := w.fr.read()
	t.Stop()
	stopClose()
	if err == nil && kind != msgHello {
		err = fmt.Errorf("unexpected message kind %d", kind)
	}
	if err != nil {
		// One that closed its pipe is exiting, and says why on stderr.
		w.stop()
		return nil, fmt.Errorf("sandbox: worker %s did not start: %v (%s)", command[0], err, w.exitSummary())
	}
	if opts.Limiter == LimiterSampling {
		// The ceiling is the size after start-up (the runtime, goja and
		// esbuild warmed up) plus the budget, as RLIMIT_DATA's is.
		base, err := residentBytes(w.pid)
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("sandbox: worker %s: resident memory: %w", command[0], err)
		}
		w.resident = base + opts.MemoryLimit*RaceMemoryFactor
	}
	return w, nil
}

// dead reports whether the process has exited.
func (w *procWorker) dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL (a no-op once the process has exited).
func (w *procWorker) kill() { _ = w.cmd.Process.Kill() }

// stop closes the worker's input, which makes it exit, kills it if it has
// not after stopTimeout, waits for it and closes its output.
func (w *procWorker) stop() {
	_ = w.toW.Close()
	select {
	case <-w.exited:
	case <-time.After(stopTimeout):
		w.kill()
		<-w.exited
	}
	_ = w.fromW.Close()
}

// forbiddenSyscall reports whether the process was killed by its seccomp
// filter (after exited is closed).
func (w *procWorker) forbiddenSyscall() bool {
	var ee *exec.ExitError
	return errors.As(w.waitErr, &ee) && killedBySeccomp(ee.ProcessState)
}

// exitSummary describes how the process ended (after exited is closed):
// its exit status and the first fatal line it printed.
func (w *procWorker) exitSummary() string {
	s := "exited"
	if w.waitErr != nil {
		s = w.waitErr.Error()
		var ee *exec.ExitError
		if errors.As(w.waitErr, &ee) {
			s = ee.ProcessState.String()
		}
	}
	if line := w.stderr.fatalLine(); line != "" {
		s += ": " + line
	}
	return s
}

// stderrTail receives a worker's stderr: lines are logged at debug level,
// the last few kept for a crash report, and out-of-memory failures noted.
// Once the process has been waited for (exited is closed), nothing writes
// to it and its fields are read without the lock.
type stderrTail struct {
	log *slog.Logger

	mu      sync.Mutex
	pid     int // set once the process started; guarded by mu
	partial []byte
	long    bool     // the line being read was longer than maxLineSize: the rest is dropped
	last    []string // the last lines, at most tailLines
	fatal   string   // the first "fatal error:", "panic:" or fault line
	oom     bool     // the runtime (or the race detector's) reported that it ran out of memory
	fault   bool     // the runtime reported a fault in its own code (a signal it could not turn into a panic)
}

const (
	tailLines   = 8
	maxLineSize = 1024
)

func (t *stderrTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	for i := bytes.IndexByte(b, '\n'); i >= 0; i = bytes.IndexByte(b, '\n') {
		if !t.long {
			t.line(append(t.partial, b[:i]...))
		}
		t.partial, t.long, b = t.partial[:0], false, b[i+1:]
	}
	if t.long {
		return n, nil
	}
	t.partial = append(t.partial, b...)
	if len(t.partial) > maxLineSize {
		// One record for a long line, its start: the rest, up to the next
		// newline, is dropped rather than logged piece by piece.
		t.line(t.partial)
		t.partial, t.long = t.partial[:0], true
	}
	return n, nil
}

func (t *stderrTail) line(b []byte) {
	s := string(b[:min(len(b), maxLineSize)])
	if strings.TrimSpace(s) == "" {
		return
	}
	if strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") || strings.Contains(s, "failed to allocate") {
		t.oom = true
	}
	// A fault in Go code is a panic; one in the runtime's own code is
	// printed as the signal ("SIGSEGV: segmentation violation"), which
	// Go's runtime, refused memory by the system's limit, sometimes does
	// instead of reporting it (its collector then follows a nil pointer).
	fault := strings.HasPrefix(s, "SIGSEGV: ") || strings.HasPrefix(s, "SIGBUS: ") || strings.HasPrefix(s, "fatal error: unexpected signal")
	t.fault = t.fault || fault
	if t.fatal == "" && (fault || strings.HasPrefix(s, "fatal error:") || strings.HasPrefix(s, "panic:") || strings.HasPrefix(s, "runtime: out of memory")) {
		t.fatal = s
	}
	if len(t.last) == tailLines {
		t.last = append(t.last[:0], t.last[1:]...)
	}
	t.last = append(t.last, s)
	t.log.Debug("sandbox worker stderr", "pid", t.pid, "line", s)
}

// fatalLine is the first fatal line, else the last line.
func (t *stderrTail) fatalLine() string {
	if t.fatal == "" && len(t.last) > 0 {
		return t.last[len(t.last)-1]
	}
	return t.fatal
}
