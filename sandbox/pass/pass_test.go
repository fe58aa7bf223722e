package pass

import (
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newExecutor returns an executor closed when the test ends.
func newExecutor(t testing.TB) *InProcess {
	return sandboxtest.Closed(t, NewInProcess(InProcessOptions{}))
}

func TestTimeoutMessage(t *testing.T) {
	for d, want := range map[time.Duration]string{
		60 * time.Second:        "timed out after 60s",
		90 * time.Second:        "timed out after 90s",
		1500 * time.Millisecond: "timed out after 1.5s",
		200 * time.Millisecond:  "timed out after 200ms",
	} {
		if got := TimeoutMessage(d); got != want {
			t.Errorf("TimeoutMessage(%v) = %q, want %q", d, got, want)
		}
	}
}
