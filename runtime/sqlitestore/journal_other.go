//go:build !linux

package sqlitestore

import "os"

// appendRecord writes b to the end of f (opened O_APPEND).
func appendRecord(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}
