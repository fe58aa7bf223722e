//go:build unix

package childpipe

import (
	"os"
	"strconv"
	"syscall"
)

// closeOnExec marks every descriptor of this process above standard error
// close-on-exec, so that a child gets only what it is given: os/exec
// duplicates Stdin, Stdout, Stderr and ExtraFiles into the child, and a
// descriptor without the flag would reach it too, whoever opened it.
// Go opens its own descriptors with the flag; those without it came from
// whatever started this process (a shell's, a desktop client's) or from
// code that left it off, and a worker or a downstream server holding one
// may keep a pipe open, a file busy or a socket in reach. A descriptor
// opened without the flag between this and the fork still passes.
// Where the system lists no descriptors (/proc/self/fd on Linux, /dev/fd
// on macOS) it does nothing.
func closeOnExec() {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		if d, err = os.Open("/dev/fd"); err != nil {
			return
		}
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
			// A descriptor closed since (the directory's own) is
			// refused, or is a new one of ours, already marked.
			syscall.CloseOnExec(fd)
		}
	}
}
