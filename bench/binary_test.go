package bench

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// serverProfile, when set, makes the benchmarks run the profiling build of
// the server (internal/profserve), which writes its CPU profiles into this
// directory.
var serverProfile = flag.String("server.cpuprofile", "", "write the codemode-mcp server's CPU profiles into this `directory`")

var built struct {
	once sync.Once
	dir  string // temporary directory holding the binary
	path string
	err  error
}

// codemodeBinary returns the path of a codemode-mcp binary built from this
// checkout, building it on first use in this process: cmd/codemode-mcp, or
// its profiling twin with -server.cpuprofile.
func codemodeBinary(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() {
		built.path, built.err = buildCodemode()
	})
	if built.err != nil {
		tb.Fatalf("build codemode-mcp: %v", built.err)
	}
	return built.path
}

// removeBinary deletes the binary built by codemodeBinary, if any.
func removeBinary() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

func buildCodemode() (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go command: %w", err)
	}
	gomod, err := exec.Command(goCmd, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	dir, err := os.MkdirTemp("", "codemode-bench-")
	if err != nil {
		return "", fmt.Errorf("create build directory: %w", err)
	}
	built.dir = dir
	out := filepath.Join(dir, "codemode-mcp")
	pkg := "./cmd/codemode-mcp"
	if *serverProfile != "" {
		pkg = "./bench/internal/profserve"
	}
	cmd := exec.Command(goCmd, "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, b)
	}
	return out, nil
}

// serverEnv is the extra environment of a codemode-mcp server.
func serverEnv() []string {
	if *serverProfile == "" {
		return nil
	}
	return []string{"CODEMODE_CPUPROFILE=" + *serverProfile}
}
