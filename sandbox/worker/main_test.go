package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"go.uber.org/goleak"
)

// envTestWorker makes the test binary a worker process (see newPool).
const envTestWorker = "CODEMODE_SANDBOX_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(envTestWorker) == "1" {
		if err := Main(context.Background(), slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { fixture.RemoveBinaries() }))
}

// newExecutor returns an in-process executor, to compare the pool with,
// closed when the test ends.
func newExecutor(t testing.TB) *pass.InProcess {
	return sandboxtest.Closed(t, pass.NewInProcess(pass.InProcessOptions{}))
}
