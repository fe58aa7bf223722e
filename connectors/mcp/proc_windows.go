package mcp

import (
	"os"
	"syscall"

	"github.com/codemode-mcp/codemode-mcp/internal/procjob"
)

// childAttr sets nothing: contain does the work here.
func childAttr() *syscall.SysProcAttr { return nil }

// contain puts the child in a Job Object that kills it, and the processes
// it starts, when release closes the job or when we exit, however we
// exit: Windows's counterpart of a process group killed at the end and of
// a parent-death signal. A process the child starts before it is put in
// the job (within moments of its start) is not in it.
func contain(p *os.Process) (release func() error, err error) {
	closeJob, err := procjob.Contain(p, 0)
	return func() error { closeJob(); return nil }, err
}
