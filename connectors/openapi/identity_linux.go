//go:build linux

package openapi

import (
	"os"
	"syscall"
)

// fileIdentity returns what identifies a file's content without reading it.
func fileIdentity(path string) (identity, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return identity{}, err
	}
	id := identity{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Inode = uint64(st.Ino)
		id.CTime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return id, nil
}
