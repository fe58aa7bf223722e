package procid

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// boot is the boot id and the PID namespace of this process.
func boot() string {
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(id)) + "/" + ns
}

// startTime is field 22 of /proc/PID/stat (clock ticks after boot), or "".
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold anything;
	// the fields after its last ')' start at field 3.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func isAlive(id Identity) (bool, bool) {
	err := syscall.Kill(id.PID, 0)
	switch {
	case errors.Is(err, syscall.ESRCH):
		return false, true
	case err != nil && !errors.Is(err, syscall.EPERM):
		return false, false
	}
	// Some process has that id; it is ours only if it started when ours
	// did.
	if id.Start == "" {
		return true, true
	}
	start := startTime(id.PID)
	if start == "" {
		return true, true // it exited meanwhile, or /proc is hidden: assume alive
	}
	return start == id.Start, true
}
