// Package rawpipe reads and writes pipes and TCP connections to other
// processes without waking the Go runtime's monitor thread, for the hot
// paths where a process waits on one for most of every request: the
// sandbox's worker pipes (both ends), the stdio pipes of downstream MCP
// servers, and the kept-alive connections an OpenAPI connector makes its
// GETs on (connectors/openapi's directTransport, through WrapConn).
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
// side-effecting one from 1.25× to 1.34× (target 1.3×). On the OpenAPI
// connector's sockets raw I/O alone measured no gain; with polling reads
// (Spin) it keeps the instant GET's bar (BENCHMARKS.md, "The instant GET
// regains its margin").
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

// File is what Wrap returns: the pipe's reads, writes, deadlines and
// Close.
type File interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// Wrap returns f read and written with raw system calls where this OS
// allows it (Linux), its reads polling for up to spin before they wait
// (see Spin; 0: they wait at once), else f itself. f must be a pipe end in
// non-blocking mode served by Go's poller, as os.Pipe returns. Closing the
// result closes f.
func Wrap(f *os.File, spin time.Duration) File {
	if p, err := New(f); err == nil {
		p.spin = newSpinner(spin)
		return p
	}
	return f
}

// Spin is how long a read on the server's end of an exchange polls before
// it waits in Go's poller, given to Wrap by the ends on the path of a
// call made inside a program: the server's read end of a sandbox worker's
// pipe (the program's next call usually comes within tens of microseconds
// of the answer to its last) and the stdio MCP connector's read end of a
// downstream server's output (a local MCP server answers within that time
// too), and an OpenAPI connector's kept-alive connection (WrapConn: a
// near API answers within it; one that answers after more than 2 ms stops
// the polling, see below). Linux only.
//
// Why: on a machine whose idle CPUs halt (every virtual machine measured
// here), a process that waits in the poller has its thread parked and its
// CPU halted, and waking them is most of what a hop between processes
// costs (BENCHMARKS.md, "A GET through a program"). A server that keeps
// reading for a little while after each exchange is still running when
// the next message comes, so that hop costs a read instead of a wake-up.
//
// The polling (spinner and poll, spin_linux.go) keeps these invariants:
//   - it only runs when a read finds nothing: a read that finds data
//     returns it at once, and a read that waited in the poller does not
//     poll again;
//   - it runs only while it pays: a read polls when the last read of the
//     same descriptor that found nothing had its data within 2 ms
//     (pollWithin spins), so against an API, or a program, that takes
//     longer the descriptor stops polling (its reads wait in the poller
//     at once) until an answer comes quickly again; a read that ended
//     without data (a deadline, a Close) counts as slow;
//   - it is bounded: a Read polls for at most its spin, once, and then
//     waits in the poller as before, so a deadline or a Close that comes
//     during the polling takes effect at most spin late;
//   - it gives the CPU to other threads on every turn (sched_yield): the
//     process it has just woken (the worker, the API) is often placed on
//     the same CPU, and polling without yielding made a GET against an API
//     taking 1 ms slower, not faster (BENCHMARKS.md);
//   - it keeps its goroutine's P meanwhile: another goroutine of the
//     process that becomes runnable goes to an idle P, or waits at most
//     spin. (Handing the P over on every turn, runtime.Gosched, cost more
//     than the polling saved.)
//
// The sandbox worker's own ends do not poll: with two CPUs the worker, the
// server and the API would be three processes on the CPUs at once, and a
// worker that polled while the server worked took the CPU the server
// needed (BENCHMARKS.md).
const Spin = 100 * time.Microsecond
