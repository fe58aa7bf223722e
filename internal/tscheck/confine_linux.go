//go:build linux

package tscheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// nobodyUID is the user and group a checker started by root runs as, as
// a sandbox worker does.
const nobodyUID = 65534

// confine sets cmd up to run as a sandbox worker runs: in a process group
// of its own (killed whole when the check is cancelled), killed when the
// server dies (parent-death signal), and, when the server runs as root,
// as nobody with no supplementary groups, to whom dir and its files are
// given. That user reads only what any user may: the checker's
// installation must be readable by it.
func confine(cmd *exec.Cmd, dir string) error {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		if err := giveTo(dir, nobodyUID); err != nil {
			return err
		}
		attr.Credential = &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return nil
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
