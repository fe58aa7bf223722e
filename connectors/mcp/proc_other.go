//go:build !unix && !windows

package mcp

import (
	"os"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

func contain(*os.Process) (release func(), err error) { return func() {}, nil }

func killProcessGroup(int) error { return nil }
