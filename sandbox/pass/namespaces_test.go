package pass

import (
	"context"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
)

func TestNamespaceClashesAreInternalErrors(t *testing.T) {
	e := newExecutor(t)
	for _, g := range [][]sandbox.Global{
		{{Name: "a"}, {Name: "a.b"}},
		{{Name: "a.b"}, {Name: "a"}},
		{{Name: "a.b.c"}, {Name: "a.b", Unavailable: "x"}},
		{{Name: "a..b"}},
		{{Name: "a."}},
		{{Name: "codemode.x"}},
		{{Name: "x.__proto__"}},
		{{Name: "a.b"}, {Name: "a.b"}},
	} {
		_, err := e.Run(context.Background(), sandbox.Program{Code: "1", Globals: g}, &sandboxtest.Host{})
		if err == nil || !strings.Contains(err.Error(), "clashes") {
			t.Errorf("globals %v: error %v", g, err)
		}
	}
}
