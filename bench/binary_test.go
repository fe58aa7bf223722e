package bench

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
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
	dir, err := os.MkdirTemp("", "codemode-bench-")
	if err != nil {
		return "", fmt.Errorf("create build directory: %w", err)
	}
	built.dir = dir
	pkg := "./cmd/codemode-mcp"
	if *serverProfile != "" {
		pkg = "./bench/internal/profserve"
	}
	return fixture.BuildCommand(pkg, dir, "codemode-mcp")
}

// serverEnv is the extra environment of a codemode-mcp server.
func serverEnv() []string {
	if *serverProfile == "" {
		return nil
	}
	return []string{"CODEMODE_CPUPROFILE=" + *serverProfile}
}
