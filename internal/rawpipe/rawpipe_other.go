//go:build !linux

package rawpipe

import (
	"errors"
	"net"
	"os"
	"time"
)

// Pipe is not available on this OS; New always fails.
type Pipe struct {
	*os.File
	spin *spinner
}

// spinner is Linux's only: reads here never poll.
type spinner struct{}

func newSpinner(time.Duration) *spinner { return nil }

// New reports errors.ErrUnsupported: Wrap then uses the *os.File.
func New(*os.File) (*Pipe, error) { return nil, errors.ErrUnsupported }

// WrapConn returns c itself: raw socket I/O is Linux's only.
func WrapConn(c *net.TCPConn, _ time.Duration) net.Conn { return c }
