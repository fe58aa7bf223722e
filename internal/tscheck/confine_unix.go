//go:build unix && !linux

package tscheck

import (
	"os/exec"
	"syscall"
)

// confine sets cmd up to run in a process group of its own, killed whole
// when the check is cancelled. (Linux also kills it with the server and
// drops root: confine_linux.go.)
func confine(cmd *exec.Cmd, _ string, _ func(string, ...any)) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return nil
}
