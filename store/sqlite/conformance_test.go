package sqlite

import (
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// The store passes the conformance suite every codemode.Store must pass;
// Another opens a second handle on the same file, as a second process
// (a server and the command line) does.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Factory{
		New: func(t *testing.T) codemode.Store { return openTemp(t) },
		Another: func(t *testing.T, s codemode.Store) codemode.Store {
			return openAt(t, s.(*Store).Path(), Options{})
		},
	})
}
