package bench

import (
	"os"
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
		if thingsBuilt.dir != "" {
			_ = os.RemoveAll(thingsBuilt.dir)
		}
		fixture.RemoveBinaries()
	}))
}
