//go:build linux && amd64

package worker

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the system call numbers of the x32 ABI, which the filter
// refuses outright.
const x32Bit = 0x40000000

// deniedSyscalls are the system calls a worker never makes once it serves
// programs (see hardenWorker).
var deniedSyscalls = append(commonDenied,
	unix.SYS_OPEN, unix.SYS_CREAT, unix.SYS_MKDIR, unix.SYS_RMDIR, unix.SYS_LINK,
	unix.SYS_UNLINK, unix.SYS_SYMLINK, unix.SYS_RENAME, unix.SYS_CHMOD, unix.SYS_CHOWN,
	unix.SYS_LCHOWN, unix.SYS_MKNOD, unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_IOPL, unix.SYS_IOPERM,
	unix.SYS_USELIB, unix.SYS_INOTIFY_INIT,
)
