package postgres

import (
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// The store passes the conformance suite every codemode.Store must pass,
// unchanged; Another opens a second pool on the same database, as another
// replica does.
func TestConformance(t *testing.T) {
	urls := map[codemode.Store]string{}
	storetest.Run(t, storetest.Factory{
		New: func(t *testing.T) codemode.Store {
			s, url := openTemp(t)
			urls[s] = url
			return s
		},
		Another: func(t *testing.T, s codemode.Store) codemode.Store {
			return openAt(t, urls[s], Options{})
		},
	})
}
