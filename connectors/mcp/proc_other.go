//go:build !unix && !windows

package mcp

import (
	"os"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

func contain(*os.Process) (release func() error, err error) { return func() error { return nil }, nil }
