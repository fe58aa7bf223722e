package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
)

// envTestWorker makes the test binary a sandbox worker process (see
// setup.workers).
const envTestWorker = "CODEMODE_RUNTIME_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(envTestWorker) == "1" {
		if err := worker.Main(context.Background(), slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			fmt.Fprintln(os.Stderr, "runtime test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	fixture.RemoveBinaries()
	if code == 0 {
		// regexp2 (JSON Schema patterns with a match timeout) keeps one
		// clock goroutine of its own for a while after a match.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
