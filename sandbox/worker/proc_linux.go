package worker

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Linux is where the process executor is developed and every suite runs,
// with both limiters (LimiterSystem, the default, and LimiterSampling).

// systemLimiter is what LimiterSystem means here: RLIMIT_DATA.
const systemLimiter = LimiterSystem

// residentSupported reports whether residentBytes works here.
const residentSupported = true

// killedBySeccomp reports whether a process died of SIGSYS, the signal of
// a seccomp filter's SECCOMP_RET_KILL_PROCESS.
func killedBySeccomp(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS
}

// limitData sets the hard data-size limit of this process (RLIMIT_DATA:
// private writable mappings, which is what Go's heap and stacks are made
// of, while address space merely reserved is not counted, so Go's runtime
// works under it as it does not under RLIMIT_AS). The limit is the data
// size at start plus limit, scaled for the race detector's shadow memory.
// Past it the Go runtime cannot grow the heap and the process dies with
// "fatal error: runtime: out of memory", or sometimes of a SIGSEGV in its
// collector (see stderrTail.fault).
func limitData(limit int64) error {
	base, err := vmDataBytes()
	if err != nil {
		return err
	}
	n := uint64(base) + uint64(limit)*RaceMemoryFactor
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		return fmt.Errorf("sandbox worker: set RLIMIT_DATA to %d: %w", n, err)
	}
	return nil
}

// vmDataBytes reads VmData of /proc/self/status ("VmData:   1234 kB").
func vmDataBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("sandbox worker: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmData:"); ok {
			if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10, nil
				}
			}
			break
		}
	}
	return 0, errors.New("sandbox worker: no VmData field in /proc/self/status")
}

// residentBytes returns the resident memory of process pid: the second
// field of /proc/PID/statm, in pages.
func residentBytes(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %q", pid, b)
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: %w", pid, err)
	}
	return pages * int64(os.Getpagesize()), nil
}
