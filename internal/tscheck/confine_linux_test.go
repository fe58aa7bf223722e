//go:build linux

package tscheck

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A checker that nobody cannot reach (its directory private to root) runs
// as the server's user, and the log says why, once: refusing every check
// would make sandbox.typecheck unusable from a private directory.
func TestCheckerNobodyCannotReachRunsAsTheServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root starts checkers as nobody")
	}
	private := filepath.Join(sharedDir(t), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(private, "tsc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"program.ts(3,1): error TS9999: uid=$(id -u)\"\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c := newChecker(bin, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 2 {
		problems, err := c.Check(context.Background(), "1", "")
		if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "uid=0") {
			t.Fatalf("problems %q, err %v; want the checker run as root", problems, err)
		}
	}
	if n := strings.Count(logs.String(), "the type checker runs as root"); n != 1 {
		t.Fatalf("the warning was logged %d times, want once:\n%s", n, logs.String())
	}
	if worldReachable(bin) || !worldReachable("/bin/sh") {
		t.Error("worldReachable got the private checker or /bin/sh wrong")
	}
}
