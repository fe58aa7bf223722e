package oauth

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if err := pgtest.Stop(); err != nil {
			println("stop the PostgreSQL test cluster:", err.Error())
		}
	}))
}
