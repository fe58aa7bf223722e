//go:build !linux

package rawpipe

import (
	"errors"
	"net"
	"os"
)

// Pipe is not available on this OS; New always fails.
type Pipe struct {
	*os.File
}

// New reports errors.ErrUnsupported: Wrap then uses the *os.File.
func New(*os.File) (*Pipe, error) { return nil, errors.ErrUnsupported }

// WrapConn returns c: raw system calls are Linux's only.
func WrapConn(c *net.TCPConn) net.Conn { return c }
