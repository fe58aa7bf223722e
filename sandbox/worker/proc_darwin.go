package worker

import (
	"fmt"
	"syscall"
	"unsafe"
)

// macOS: built and vetted for amd64 and arm64 by scripts/test.sh, never
// run (there is no Mac where this project is tested). The pool, the pipes
// (fds 3 and 4, served by Go's poller) and the heap watchdog are the code
// the Linux suites run; what is macOS's own is below: the limiter reads a
// worker's resident size with proc_pidinfo, and a worker does not confine
// its system calls (there is no seccomp; goja gives a program none to
// make).

// systemLimiter is what LimiterSystem means here. macOS enforces neither
// RLIMIT_DATA nor RLIMIT_AS on the mmap'd memory Go's heap is made of, so
// the parent samples.
const systemLimiter = LimiterSampling

// residentSupported reports whether residentBytes works here.
const residentSupported = true

// From <sys/proc_info.h>: proc_pidinfo(pid, PROC_PIDTASKINFO, 0, &info,
// sizeof info) is the proc_info system call with PROC_INFO_CALL_PIDINFO;
// struct proc_taskinfo begins with the virtual and resident sizes.
const (
	procInfoCallPIDInfo = 2
	procPIDTaskInfo     = 4
)

type procTaskInfo struct {
	virtualSize, residentSize                  uint64
	totalUser, totalSystem                     uint64
	threadsUser, threadsSystem                 uint64
	policy, faults, pageins, cowFaults         int32
	messagesSent, messagesReceived             int32
	syscallsMach, syscallsUnix, csw, threadnum int32
	numRunning, priority                       int32
}

// residentBytes returns the resident memory of process pid (a child of
// this process, which needs no privilege).
func residentBytes(pid int) (int64, error) {
	var info procTaskInfo
	n, _, errno := syscall.Syscall6(syscall.SYS_PROC_INFO, procInfoCallPIDInfo, uintptr(pid), procPIDTaskInfo, 0,
		uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info))
	switch {
	case errno != 0:
		return 0, fmt.Errorf("proc_pidinfo %d: %w", pid, errno)
	case n != unsafe.Sizeof(info):
		return 0, fmt.Errorf("proc_pidinfo %d: %d bytes of task info, want %d", pid, n, unsafe.Sizeof(info))
	}
	return int64(info.residentSize), nil
}
