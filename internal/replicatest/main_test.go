package replicatest

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.RemoveBinaries()
	if err := pgtest.Stop(); err != nil {
		println("stop the PostgreSQL test cluster:", err.Error())
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			println("goleak:", err.Error())
			code = 1
		}
	}
	os.Exit(code)
}
