//go:build linux

package tscheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
)

// nobodyUID is the user and group a checker started by root runs as, as
// a sandbox worker does.
const nobodyUID = 65534

// confine sets cmd up to run as a sandbox worker runs: in a process group
// of its own (killed whole when the check is cancelled), killed when the
// server dies (parent-death signal), and, when the server runs as root,
// as nobody with no supplementary groups, to whom dir and its files are
// given. That user reads only what any user may, so that happens only
// when the checker is where any user can run it (worldReachable); else
// the checker runs as root, which warn says once. (Its first defence is
// elsewhere: it resolves no file, and one that reads any is refused.)
func confine(cmd *exec.Cmd, dir string, warn func(msg string, args ...any)) error {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 && !worldReachable(cmd.Path) {
		warnRootOnce.Do(func() {
			warn("the type checker runs as root: nobody cannot reach it; install it where every user can read it (not under /root) for it to run as nobody", "checker", cmd.Path)
		})
	}
	if os.Geteuid() == 0 && worldReachable(cmd.Path) {
		if err := giveTo(dir, nobodyUID); err != nil {
			return err
		}
		attr.Credential = &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return nil
}

var warnRootOnce sync.Once

// worldReachable reports whether any user can run the program at path:
// every directory above it (after symbolic links) searchable by others,
// and the file readable and executable by them.
func worldReachable(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	fi, err := os.Stat(real)
	if err != nil || fi.Mode().Perm()&0o005 != 0o005 {
		return false
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		di, err := os.Stat(d)
		if err != nil || di.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// giveTo makes dir and the files in it owned by uid (as group too).
func giveTo(dir string, uid int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, p := range paths {
		if err := os.Chown(p, uid, uid); err != nil {
			return fmt.Errorf("give the check's files to uid %d: %w", uid, err)
		}
	}
	return nil
}
