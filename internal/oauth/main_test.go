package oauth

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	}))
}
