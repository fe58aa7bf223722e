//go:build !linux

package sqlite

import "os"

// sink adds journal records to a file with write(2).
type sink struct {
	f   *os.File
	off int64
}

func newSink(f *os.File) sink { return sink{f: f} }

// write adds records b at the end.
func (s *sink) write(b []byte) error {
	n, err := s.f.WriteAt(b, s.off)
	s.off += int64(n)
	return err
}

func (s *sink) close() error { return nil }
