//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
)

// procField returns the value of a "Name:\tvalue" line of /proc/pid/status.
func procField(t *testing.T, status, name string) string {
	t.Helper()
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in the status:\n%s", name, status)
	return ""
}

// TestWorkerConfinement: a worker runs with no_new_privs, a seccomp
// filter, no capabilities, in "/", with few files (read in its /proc
// entries), and this process (the pool's owner) is not confined. That the
// filter kills a worker on the calls it denies, and that the run in it
// ends saying so, is sandbox/worker's TestDeniedSystemCallsKill and
// TestAForbiddenCallEndsTheRun.
func TestWorkerConfinement(t *testing.T) {
	pool := newPool(t, ProcessOptions{Size: 1})
	waitIdle(t, pool, 1)
	pid := pool.Stats().PIDs[0]
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(status)
	nofile := ""
	for line := range strings.SplitSeq(string(limits), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max open files") && len(f) >= 5 {
			nofile = f[4] // the hard limit
		}
	}
	if procField(t, s, "NoNewPrivs") != "1" || procField(t, s, "Seccomp") != "2" ||
		procField(t, s, "CapEff") != "0000000000000000" || procField(t, s, "CapPrm") != "0000000000000000" ||
		nofile != strconv.Itoa(worker.MaxFiles) || cwd != "/" {
		t.Errorf("worker confinement: cwd %s, open files %s, status:\n%s", cwd, nofile, s)
	}
	if uid := strings.Fields(procField(t, s, "Uid")); os.Geteuid() == 0 && uid[1] != strconv.Itoa(worker.NobodyUID) {
		t.Errorf("a worker started by root runs as uid %s, want %d", uid[1], worker.NobodyUID)
	}
	if o := run(t, pool, &fakeHost{}, "1 + 1", Limits{}); string(o.Result) != "2" {
		t.Errorf("a run in the confined worker: %v %s %q", o.Status, o.Result, o.Error)
	}

	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("the pool's owner cannot open a file: %v", err)
	}
	if !strings.Contains(string(own), "NoNewPrivs:\t0") || !strings.Contains(string(own), "Seccomp:\t0") {
		t.Errorf("the pool's owner is confined:\n%s", own)
	}
}
