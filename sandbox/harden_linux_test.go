//go:build linux

package sandbox

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
	"github.com/dop251/goja"
	"golang.org/x/sys/unix"
)

// In a test worker process, programs get two probes of the worker's
// confinement: __confinement() describes it (as JSON), and __syscall(name)
// makes a system call the filter denies (harmless if it were allowed).
func init() {
	if os.Getenv(envTestWorker) == "1" {
		pass.ProbeGlobals = installProbes
	}
}

func installProbes(vm *goja.Runtime) error {
	g := vm.GlobalObject()
	if err := g.Set("__confinement", func() string {
		nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		mode, _ := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
		var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		capErr := unix.Capget(&hdr, &data[0])
		var nofile unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
		cwd, _ := unix.Getwd()
		b, _ := json.Marshal(map[string]any{
			"noNewPrivs": nnp, "seccomp": mode, "capsOK": capErr == nil,
			"capEff": uint64(data[0].Effective) | uint64(data[1].Effective)<<32,
			"capPrm": uint64(data[0].Permitted) | uint64(data[1].Permitted)<<32,
			"uid":    unix.Geteuid(), "nofile": nofile.Max, "cwd": cwd,
		})
		return string(b)
	}); err != nil {
		return err
	}
	path, _ := unix.BytePtrFromString("/nonexistent/codemode-probe")
	fdcwd := unix.AT_FDCWD
	atFDCWD := uintptr(fdcwd)
	calls := map[string]func(){
		"openat": func() { unix.Syscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(path)), unix.O_RDONLY, 0, 0, 0) },
		"socket": func() { unix.Syscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0) },
		"execve": func() { unix.Syscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), 0, 0) },
		"ptrace": func() { unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, 1, 0, 0, 0, 0) },
		"kill":   func() { unix.Syscall(unix.SYS_KILL, 1, 0, 0) }, // signal 0 to init: a probe only
	}
	return g.Set("__syscall", func(name string) string {
		f, ok := calls[name]
		if !ok {
			panic(vm.NewTypeError("no probe %q", name))
		}
		f()
		return "survived " + name
	})
}

// TestWorkerConfinement: a worker runs with no_new_privs, a seccomp
// filter, no capabilities, in "/", with few files; a denied system call
// kills that worker only — the run reports it, the next run gets a new
// worker, and this process (the pool's owner) is not confined.
func TestWorkerConfinement(t *testing.T) {
	pool := newPool(t, ProcessOptions{Size: 1})
	o := run(t, pool, &fakeHost{}, "JSON.parse(__confinement())", Limits{})
	if o.Status != Completed {
		t.Fatalf("probe: %v %q", o.Status, o.Error)
	}
	var c struct {
		NoNewPrivs, Seccomp int
		CapsOK              bool
		CapEff, CapPrm      uint64
		UID                 int
		Nofile              uint64
		Cwd                 string
	}
	if err := json.Unmarshal(o.Result, &c); err != nil {
		t.Fatal(err)
	}
	if c.NoNewPrivs != 1 || c.Seccomp != 2 || !c.CapsOK || c.CapEff != 0 || c.CapPrm != 0 || c.Nofile != worker.MaxFiles || c.Cwd != "/" {
		t.Errorf("worker confinement: %s", o.Result)
	}
	if os.Geteuid() == 0 && c.UID != worker.NobodyUID {
		t.Errorf("a worker started by root runs as uid %d, want %d", c.UID, worker.NobodyUID)
	}

	for _, name := range []string{"openat", "socket", "execve", "ptrace", "kill"} {
		o := run(t, pool, &fakeHost{}, "try { __syscall('"+name+"') } catch (e) { 'caught' }", Limits{})
		if o.Status != Failed || !strings.Contains(o.Error, "system call the sandbox forbids") {
			t.Errorf("%s: %v %s %q, want the worker killed", name, o.Status, o.Result, o.Error)
		}
		if o := run(t, pool, &fakeHost{}, "1 + 1", Limits{}); string(o.Result) != "2" {
			t.Errorf("after %s, the next run: %v %s %q", name, o.Status, o.Result, o.Error)
		}
	}

	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("the pool's owner cannot open a file: %v", err)
	}
	if !strings.Contains(string(status), "NoNewPrivs:\t0") || !strings.Contains(string(status), "Seccomp:\t0") {
		t.Errorf("the pool's owner is confined:\n%s", status)
	}
}
