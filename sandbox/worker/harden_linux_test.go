//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"

	"golang.org/x/sys/unix"
)

// envProbe makes this test binary a confined process that makes one
// system call, before any test runs (see init).
const envProbe = "CODEMODE_WORKER_TEST_PROBE"

// probes are system calls the filter denies, each harmless were it
// allowed.
var probes = map[string]func(){
	"openat": func() {
		path, _ := unix.BytePtrFromString("/nonexistent/codemode-probe")
		fdcwd := unix.AT_FDCWD
		unix.Syscall6(unix.SYS_OPENAT, uintptr(fdcwd), uintptr(unsafe.Pointer(path)), unix.O_RDONLY, 0, 0, 0)
	},
	"socket": func() { unix.Syscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0) },
	"execve": func() {
		path, _ := unix.BytePtrFromString("/nonexistent/codemode-probe")
		unix.Syscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), 0, 0)
	},
	"ptrace": func() { unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, 1, 0, 0, 0, 0) },
	"kill":   func() { unix.Syscall(unix.SYS_KILL, 1, 0, 0) }, // signal 0 to init: a probe only
}

// envProbeWorker makes this test binary a worker of a Pool that makes a
// denied system call (openat) once its run makes its first host call.
const envProbeWorker = "CODEMODE_WORKER_TEST_PROBE_WORKER"

func init() {
	if os.Getenv(envProbeWorker) == "1" {
		in, out, err := workerPipes()
		if err == nil {
			err = hardenWorker()
		}
		if err == nil {
			err = Serve(context.Background(), in, probeOnCall{out}, Config{})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if name := os.Getenv(envProbe); name != "" {
		if err := hardenWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "harden:", err)
			os.Exit(2)
		}
		if probe, ok := probes[name]; ok {
			probe()
		}
		os.Exit(0) // survived
	}
}

// A confined worker that makes a system call the filter denies is killed
// by SIGSYS, which the pool reports as a forbidden call (killedBySeccomp);
// one that makes none lives.
func TestDeniedSystemCallsKill(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envProbe+"=none")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a confined process that makes no denied call: %v %s", err, out)
	}
	for name := range probes {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envProbe+"="+name)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !killedBySeccomp(ee.ProcessState) {
			t.Errorf("%s: %v %s, want the process killed by SIGSYS", name, err, out)
		}
	}
}

// probeOnCall is a worker's output that makes a denied system call when
// the worker sends its first host call (a frame's kind follows its
// length).
type probeOnCall struct{ io.Writer }

func (w probeOnCall) Write(b []byte) (int, error) {
	if len(b) > 4 && b[4] == msgCall {
		probes["openat"]()
	}
	return w.Writer.Write(b)
}

// nothingHost answers every call with {}.
type nothingHost struct{}

func (nothingHost) Call(context.Context, pass.Call) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}
func (nothingHost) StepResult(context.Context, pass.Step) (json.RawMessage, bool, error) {
	return nil, false, nil
}
func (nothingHost) StepDone(context.Context, pass.Step, json.RawMessage, string) error { return nil }
func (nothingHost) Service(context.Context, pass.ServiceCall) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// A worker that a denied system call kills during a run ends that run
// with an error saying so, and the pool goes on with a new worker.
func TestAForbiddenCallEndsTheRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool(Options{Command: []string{exe}, Env: []string{envProbeWorker + "=1"}, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p := pass.Program{Code: "await notes.listNotes({});\nwhile (true) {}", Globals: []pass.Global{{Name: "notes", Methods: []string{"listNotes"}}}}
	for range 2 {
		o, err := pool.Run(context.Background(), p, nothingHost{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != pass.Failed || !strings.Contains(o.Error, "system call the sandbox forbids") {
			t.Errorf("run = %v %q, want it ended by the forbidden call", o.Status, o.Error)
		}
	}
	o, err := pool.Run(context.Background(), pass.Program{Code: "1 + 1"}, nothingHost{})
	if err != nil || string(o.Result) != "2" {
		t.Errorf("a run without calls: %v %s %q, %v", o.Status, o.Result, o.Error, err)
	}
}
