package mcp

import "syscall"

// childAttr starts the child in its own process group, so that
// contain's release can reach the processes it starts (npx starts node),
// and has the kernel send it SIGKILL when we die, however we die (kill -9
// included), so that no server is left running without its client.
//
// The parent-death signal is sent when the thread that forked the child
// exits, not the process: startProcess forks on a goroutine locked to its
// thread and keeps it there until the child is reaped, so the thread
// lives exactly as long as the child needs it. Only the child gets the
// signal; the processes it started (node under npx) see their standard
// input end, which a stdio MCP server takes as the end of its session.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
