// Package procid identifies this process for the runtime's owner records
// and tells whether a process so identified is still alive.
//
// A process id alone does not say that: ids are reused, and the same id
// means another process on another machine or in another PID namespace
// (a container). So an identity carries the host name, where the id is
// meaningful (Boot: on Linux the boot id and the PID namespace), and the
// process's start time; a process checks another's liveness only when
// both share Host and Boot, and then by its id and start time.
package procid

import (
	"math"
	"os"
	"sync"
)

// Identity identifies one process.
type Identity struct {
	Host string
	// Boot names where PID is meaningful ("" when unknown).
	Boot string
	PID  int
	// Start is the process's start time as the system reports it ("" when
	// unknown).
	Start string
}

var self = sync.OnceValue(func() Identity {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	pid := os.Getpid()
	return Identity{Host: host, Boot: boot(), PID: pid, Start: startTime(pid)}
})

// Self returns this process's identity.
func Self() Identity { return self() }

// Alive reports whether the process id names is running. known is false
// when it cannot tell (another machine or namespace, or a system where it
// cannot look): the caller must decide otherwise (by a lease). Only an id
// of the same host, boot and PID namespace as this process can be checked,
// and only a PID the system can have (a pid_t: a larger one, read from a
// store, would be cut to another process's).
func Alive(id Identity) (alive, known bool) {
	if s := Self(); id.Host != s.Host || id.Boot != s.Boot || s.Boot == "" || id.PID <= 0 || id.PID > math.MaxInt32 {
		return false, false
	}
	return isAlive(id)
}
