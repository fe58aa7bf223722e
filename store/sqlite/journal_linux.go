package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// mapChunk is the first size of a journal file and the unit it grows by
// at least.
const mapChunk = 64 << 10

// sink adds journal records to a file mapped into memory. Invariant: the
// file's first off bytes hold whole records, the rest of the mapping is
// zeros (a fresh file, or one grown by fallocate), so a reader stops
// where the records stop; a record is visible to a reader of the file as
// soon as it is copied.
type sink struct {
	f   *os.File
	m   []byte // the file mapped, len(m) bytes of it; nil: write(2) instead
	off int    // where the next record goes
}

// newSink maps f (empty, opened for reading and writing). Where the file
// cannot be mapped or its blocks reserved, it writes records with
// write(2) instead.
func newSink(f *os.File) sink {
	s := sink{f: f}
	if err := s.grow(mapChunk); err != nil {
		s.m = nil
	}
	return s
}

// grow maps at least n bytes of the file, reserving its blocks first.
func (s *sink) grow(n int) error {
	size := max(2*len(s.m), mapChunk)
	for size < n {
		size *= 2
	}
	fd := int(s.f.Fd())
	if err := syscall.Fallocate(fd, 0, 0, int64(size)); err != nil {
		return fmt.Errorf("reserve %d bytes: %w", size, err)
	}
	m, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map %d bytes: %w", size, err)
	}
	if s.m != nil {
		if err := syscall.Munmap(s.m); err != nil {
			_ = syscall.Munmap(m)
			return fmt.Errorf("unmap: %w", err)
		}
	}
	s.m = m
	return nil
}

// write adds records b at the end.
func (s *sink) write(b []byte) error {
	if s.m == nil {
		_, err := s.f.WriteAt(b, int64(s.off))
		if err == nil {
			s.off += len(b)
		}
		return err
	}
	if s.off+len(b) > len(s.m) {
		if err := s.grow(s.off + len(b)); err != nil {
			return err
		}
	}
	s.off += copy(s.m[s.off:], b)
	return nil
}

// close unmaps the file.
func (s *sink) close() error {
	if s.m == nil {
		return nil
	}
	err := syscall.Munmap(s.m)
	s.m = nil
	return err
}
