//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child in its own process group, so that
// killProcessGroup can reach the processes it started (npx starts node).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills what is left of the child's process group once the
// child itself has been reaped.
func killProcessGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
