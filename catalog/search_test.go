package catalog

import (
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// A method's group is its first tag, else the first literal segment of
// its route's path, else its source name's namespace, bounded in length.
func TestMethodGroup(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		def  connectors.Tool
		want string
	}{
		{connectors.Tool{SourceName: "issues/create", Tags: []string{"issues", "write"}, Route: "POST /repos/{owner}/{repo}/issues"}, "issues"},
		{connectors.Tool{SourceName: "getRepo", Route: "GET /repos/{owner}"}, "repos"},
		{connectors.Tool{SourceName: "byId", Route: "GET /{id}"}, ""},
		{connectors.Tool{SourceName: "fs/read_file"}, "fs"},
		{connectors.Tool{SourceName: "billing.invoices.list"}, "billing"},
		{connectors.Tool{SourceName: "get_sum"}, ""},
		{connectors.Tool{SourceName: "x", Tags: []string{long}}, long[:maxGroupName] + "…"},
	} {
		if got := (&Method{Def: tc.def}).group(); got != tc.want {
			t.Errorf("group of %+v = %q, want %q", tc.def, got, tc.want)
		}
	}
}
