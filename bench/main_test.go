package bench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

func TestMain(m *testing.M) {
	if echoChild() {
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		removeBinary()
		fixture.RemoveBinaries()
	}))
}
