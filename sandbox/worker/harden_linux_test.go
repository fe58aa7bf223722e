//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
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

// envProbeNoFilter makes the probe's architecture one without a seccomp
// filter.
const envProbeNoFilter = "CODEMODE_WORKER_TEST_PROBE_NO_FILTER"

func init() {
	if os.Getenv(envProbeWorker) == "1" {
		in, out, err := workerPipes()
		if err == nil {
			err = hardenWorker(slog.New(slog.NewTextHandler(os.Stderr, nil)))
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
		if os.Getenv(envProbeNoFilter) == "1" {
			deniedSyscalls = nil // as on an architecture without a filter (harden_linux_other.go)
		}
		if err := hardenWorker(slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
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

// On an architecture without a seccomp filter a worker starts with the
// rest of its confinement, unfiltered, and says so once in its log.
func TestNoFilterForTheArchitectureStartsUnfiltered(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envProbe+"=openat", envProbeNoFilter+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("a worker with no filter for its architecture: %v %s, want it to start and live", err, out)
	}
	if n := strings.Count(string(out), "no seccomp filter on this architecture"); n != 1 {
		t.Errorf("the worker said %d times that it runs unfiltered, want once:\n%s", n, out)
	}
}

// Only the missing filter of an architecture lets a worker go on
// unfiltered: a failure to install the filter, even one that wraps
// ErrUnsupported (ENOSYS from a kernel without seccomp), stops it.
func TestOnlyNoFilterForTheArchitectureIsAccepted(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	failed := fmt.Errorf("sandbox worker: install the seccomp filter: %w", unix.ENOSYS)
	if err := unfilteredIfNoFilter(log, failed); !errors.Is(err, unix.ENOSYS) {
		t.Errorf("ENOSYS installing the filter: %v, want it returned", err)
	}
	if err := unfilteredIfNoFilter(log, nil); err != nil {
		t.Errorf("a filter installed: %v", err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %q, want nothing", logs.String())
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

func (nothingHost) Call(context.Context, sandbox.Call) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}
func (nothingHost) StepResult(context.Context, sandbox.Step) (json.RawMessage, bool, error) {
	return nil, false, nil
}
func (nothingHost) StepDone(context.Context, sandbox.Step, json.RawMessage, string) error { return nil }
func (nothingHost) Service(context.Context, sandbox.ServiceCall) (json.RawMessage, error) {
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
	p := sandbox.Program{Code: "await notes.listNotes({});\nwhile (true) {}", Globals: []sandbox.Global{{Name: "notes", Methods: []string{"listNotes"}}}}
	for range 2 {
		o, err := pool.Run(context.Background(), p, nothingHost{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != sandbox.Failed || !strings.Contains(o.Error, "system call the sandbox forbids") {
			t.Errorf("run = %v %q, want it ended by the forbidden call", o.Status, o.Error)
		}
	}
	o, err := pool.Run(context.Background(), sandbox.Program{Code: "1 + 1"}, nothingHost{})
	if err != nil || string(o.Result) != "2" {
		t.Errorf("a run without calls: %v %s %q, %v", o.Status, o.Result, o.Error, err)
	}
}

// procField returns the value of a "Name:\tvalue" line of /proc/pid/status.
func procField(t *testing.T, status, name string) string {
	t.Helper()
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in the status:\n%s", name, status)
	return ""
}

// TestWorkerConfinement: a worker runs with no_new_privs, a seccomp
// filter, no capabilities, in "/", with few files (read in its /proc
// entries), and this process (the pool's owner) is not confined. That the
// filter kills a worker on the calls it denies, and that the run in it
// ends saying so, is sandbox/worker's TestDeniedSystemCallsKill and
// TestAForbiddenCallEndsTheRun.
func TestWorkerConfinement(t *testing.T) {
	pool := newPool(t, Options{Size: 1})
	waitIdle(t, pool, 1)
	pid := pool.Stats().PIDs[0]
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(status)
	nofile := ""
	for line := range strings.SplitSeq(string(limits), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max open files") && len(f) >= 5 {
			nofile = f[4] // the hard limit
		}
	}
	if procField(t, s, "NoNewPrivs") != "1" || procField(t, s, "Seccomp") != "2" ||
		procField(t, s, "CapEff") != "0000000000000000" || procField(t, s, "CapPrm") != "0000000000000000" ||
		nofile != strconv.Itoa(MaxFiles) || cwd != "/" {
		t.Errorf("worker confinement: cwd %s, open files %s, status:\n%s", cwd, nofile, s)
	}
	if uid := strings.Fields(procField(t, s, "Uid")); os.Geteuid() == 0 && uid[1] != strconv.Itoa(NobodyUID) {
		t.Errorf("a worker started by root runs as uid %s, want %d", uid[1], NobodyUID)
	}
	if o := sandboxtest.Run(t, pool, &sandboxtest.Host{}, "1 + 1", sandbox.Limits{}); string(o.Result) != "2" {
		t.Errorf("a run in the confined worker: %v %s %q", o.Status, o.Result, o.Error)
	}

	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("the pool's owner cannot open a file: %v", err)
	}
	if !strings.Contains(string(own), "NoNewPrivs:\t0") || !strings.Contains(string(own), "Seccomp:\t0") {
		t.Errorf("the pool's owner is confined:\n%s", own)
	}
}
