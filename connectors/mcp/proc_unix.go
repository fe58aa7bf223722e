//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// contain returns what kills what is left of the child's process group
// (see childAttr) once the child itself has been reaped.
func contain(p *os.Process) (release func() error, err error) {
	pid := p.Pid
	return func() error {
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill process group: %w", err)
		}
		return nil
	}, nil
}
