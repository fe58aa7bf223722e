//go:build linux && !amd64 && !arm64

package worker

// Other Linux architectures get no seccomp filter (seccompFilter reports
// it): the worker runs with the rest of its confinement.
const (
	auditArch = 0
	x32Bit    = 0
)

var deniedSyscalls []uintptr
