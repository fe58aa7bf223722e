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
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
