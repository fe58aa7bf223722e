//go:build unix && !linux

package mcp

import "syscall"

// childAttr starts the child in its own process group, so that
// contain's release can reach the processes it starts (npx starts node).
//
// These systems (macOS among them) have no parent-death signal: when we
// are killed outright (kill -9), what ends the child is its standard
// input reaching its end, since we held the only writing end, which a
// stdio MCP server takes as the end of its session; a server that ignores
// it is left running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
