//go:build linux && arm64

package worker

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is zero: arm64 has one system call numbering.
const x32Bit = 0

// deniedSyscalls are the system calls a worker never makes once it serves
// programs (see hardenWorker).
var deniedSyscalls = commonDenied
