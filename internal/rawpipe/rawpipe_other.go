//go:build !linux

package rawpipe

import (
	"errors"
	"os"
)

// Pipe is not available on this OS; New always fails.
type Pipe struct {
	*os.File
}

// New reports errors.ErrUnsupported: Wrap then uses the *os.File.
func New(*os.File) (*Pipe, error) { return nil, errors.ErrUnsupported }
