package runtime_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

func TestMain(m *testing.M) {
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
