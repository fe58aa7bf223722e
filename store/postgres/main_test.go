package postgres

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		println("stop the PostgreSQL test clusters:", err.Error())
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

// openAt opens a store on url and closes it when the test ends.
func openAt(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTemp opens a store on a new database of the shared test cluster.
func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	return openAt(t, url, Options{}), url
}
