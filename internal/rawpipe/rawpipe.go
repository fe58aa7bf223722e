// Package rawpipe reads and writes pipes to other processes without
// waking the Go runtime's monitor thread, for the hot paths where a
// process waits on one for most of every request: the sandbox's worker
// pipes (both ends) and the stdio pipes of downstream MCP servers.
//
// Why not *os.File: a system call made through Go's syscall package wakes
// the runtime's monitor thread (sysmon) when the process was idle, and
// sysmon then polls every 20 µs for a while. A process that waits on a
// pipe between requests is idle every time, so it paid a thread wake-up
// and a train of timer wake-ups per request; on a virtual machine each is
// a costly exit (BENCHMARKS.md). Raw read(2) and write(2) on the
// non-blocking descriptor leave sysmon asleep; a read that finds the pipe
// empty, or a write that finds it full, still waits in Go's poller, so
// deadlines and Close work as with *os.File.
//
// It pays for itself (BENCHMARKS.md, "msgSoon, polling reads, raw stdio"):
// without it a downstream call inside a program with process isolation
// went from 1.24× to 1.55× of the direct call (target 1.25×), and a
// side-effecting one from 1.25× to 1.34× (target 1.3×). The same was not
// true of the OpenAPI connector's sockets, which are plain net.Conns
// again, nor of polling reads, which this package no longer does.
//
// With the race detector on, the same code makes its reads and writes
// through the syscall package instead (rawio_race_linux.go), so that the
// detector sees the ordering a descriptor gives between two goroutines of
// one process; only the monitor-thread saving is lost in that build.
package rawpipe

import (
	"io"
	"os"
	"time"
)

// File is what Wrap returns: the pipe's reads, writes, read deadline and
// Close.
type File interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
}

// Wrap returns f read and written with raw system calls where this OS
// allows it (Linux), else f itself. f must be a pipe end in non-blocking
// mode served by Go's poller, as os.Pipe returns. Closing the result
// closes f.
func Wrap(f *os.File) File {
	if p, err := New(f); err == nil {
		return p
	}
	return f
}
