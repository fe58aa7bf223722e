//go:build linux

package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A worker confines itself (hardenWorker) once it has what it needs — its
// pipes, its data-size limit, the local time zone — and before it reads a
// program. If goja or a program ever escaped the JavaScript sandbox, the
// process it would find could not open a file, a socket or a process, nor
// gain a privilege:
//
//   - no_new_privs, so that nothing it could execute gains privileges;
//   - a seccomp filter (every thread, SECCOMP_FILTER_FLAG_TSYNC) that kills
//     the process on any system call goja never needs: opening or creating
//     files, sockets, executing, tracing or signalling other processes,
//     namespaces, mounts, modules, keyrings, BPF (deniedSyscalls);
//   - no capabilities: a worker started as root becomes NobodyUID (setuid on
//     every thread, which clears them);
//   - working directory "/", and at most MaxFiles open files.
//
// A denied call kills the worker (SIGSYS); the run that was in it ends
// with an error saying so, and the pool starts another worker.

// MaxFiles is a worker's RLIMIT_NOFILE: its standard streams, its two
// pipes and what Go's poller opens, with room to spare.
const MaxFiles = 32

// NobodyUID is the user and group a worker started as root runs as.
const NobodyUID = 65534

// hardenWorker confines this process (see above). It must run before any
// program does.
func hardenWorker(log *slog.Logger) error {
	// goja's Date reads the local zone, which Go loads from a file on
	// first use: load it now, while files can still be opened.
	_, _ = time.Now().Zone()
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("sandbox worker: chdir /: %w", err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: MaxFiles, Max: MaxFiles}); err != nil {
		return fmt.Errorf("sandbox worker: set RLIMIT_NOFILE: %w", err)
	}
	if os.Geteuid() == 0 {
		// Go applies these to every thread of the process.
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("sandbox worker: drop supplementary groups: %w", err)
		}
		if err := syscall.Setgid(NobodyUID); err != nil {
			return fmt.Errorf("sandbox worker: setgid: %w", err)
		}
		if err := syscall.Setuid(NobodyUID); err != nil {
			return fmt.Errorf("sandbox worker: setuid: %w", err)
		}
	}
	return unfilteredIfNoFilter(log, installSeccomp())
}

// errNoFilter is seccompFilter's error on an architecture it has no
// filter for (only amd64 and arm64 have one).
var errNoFilter = fmt.Errorf("sandbox worker: no seccomp filter for %s: %w", runtime.GOARCH, errors.ErrUnsupported)

// unfilteredIfNoFilter decides on the filter's result: an architecture
// without a filter runs its workers with the rest of their confinement,
// and each says so once, as it starts. Any other failure to install the
// filter stops the worker, even one that wraps ErrUnsupported (a kernel
// without seccomp answers ENOSYS, which does): there the filter was
// promised.
func unfilteredIfNoFilter(log *slog.Logger, err error) error {
	if errors.Is(err, errNoFilter) {
		log.Warn("sandbox worker: no seccomp filter on this architecture; it runs without one", "arch", runtime.GOARCH)
		return nil
	}
	return err
}

// installSeccomp sets no_new_privs and installs the filter on every thread.
func installSeccomp() error {
	prog, err := seccompFilter(os.Getpid())
	if err != nil {
		return err
	}
	// no_new_privs is per thread; TSYNC gives it, and the filter, to every
	// other thread of the process.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox worker: set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	switch {
	case errno != 0:
		return fmt.Errorf("sandbox worker: install the seccomp filter: %w", errno)
	case r != 0:
		return fmt.Errorf("sandbox worker: install the seccomp filter: thread %d could not be synchronised", r)
	}
	return nil
}

// seccompFilter assembles the classic-BPF program: a foreign architecture
// or a denied system call kills the process; kill and tgkill are allowed
// only towards the process itself (Go's runtime signals its own threads);
// everything else is allowed. Each test is followed by its own kill, so
// every jump is short whatever the number of denied calls.
func seccompFilter(pid int) ([]unix.SockFilter, error) {
	if len(deniedSyscalls) == 0 {
		return nil, errNoFilter
	}
	const (
		offNr     = 0  // seccomp_data.nr
		offArch   = 4  // seccomp_data.arch
		offArg0   = 16 // seccomp_data.args[0], low word (little-endian)
		offArg0Hi = 20 // and its high word
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jump := func(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	kill := unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_KILL_PROCESS}
	allow := unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}

	prog := []unix.SockFilter{
		ld(offArch),
		jump(unix.BPF_JEQ, auditArch, 1, 0), kill,
		ld(offNr),
	}
	if x32Bit != 0 { // amd64: refuse the x32 ABI's numbering outright
		prog = append(prog, jump(unix.BPF_JGE, x32Bit, 0, 1), kill)
	}
	for _, nr := range deniedSyscalls {
		prog = append(prog, jump(unix.BPF_JEQ, uint32(nr), 0, 1), kill)
	}
	prog = append(prog,
		jump(unix.BPF_JEQ, uint32(unix.SYS_KILL), 2, 0),
		jump(unix.BPF_JEQ, uint32(unix.SYS_TGKILL), 1, 0),
		allow,
		// kill or tgkill: the target (args[0]) must be this process.
		ld(offArg0Hi),
		jump(unix.BPF_JEQ, 0, 0, 2),
		ld(offArg0),
		jump(unix.BPF_JEQ, uint32(pid), 1, 0),
		kill,
		allow,
	)
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("sandbox worker: seccomp filter of %d instructions is too long", len(prog))
	}
	return prog, nil
}
