package bench

import (
	"flag"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// serverProfile, when set, makes the benchmarks run the profiling build of
// the server (internal/profserve), which writes its CPU profiles into this
// directory.
var serverProfile = flag.String("server.cpuprofile", "", "write the codemode-mcp server's CPU profiles into this `directory`")

// codemodeBinary returns the path of a codemode-mcp binary built from this
// checkout (fixture.Build): cmd/codemode-mcp, or its profiling twin with
// -server.cpuprofile.
func codemodeBinary(tb testing.TB) string {
	tb.Helper()
	if *serverProfile != "" {
		return fixture.Build(tb, "./bench/internal/profserve")
	}
	return fixture.Codemode(tb)
}

// serverEnv is the extra environment of a codemode-mcp server.
func serverEnv() []string {
	if *serverProfile == "" {
		return nil
	}
	return []string{"CODEMODE_CPUPROFILE=" + *serverProfile}
}
