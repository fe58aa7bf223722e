package bench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	if echoChild() {
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		fixture.RemoveBinaries()
		if err := pgtest.Stop(); err != nil {
			println("stop the PostgreSQL test clusters:", err.Error())
		}
	}))
}
