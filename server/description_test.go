package server

import (
	"fmt"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

func TestDescriptionIsBounded(t *testing.T) {
	var infos []codemode.ConnectorInfo
	for c := 0; c < 20; c++ {
		info := codemode.ConnectorInfo{Name: fmt.Sprintf("conn%d", c), Description: "a connector\nwith a second line"}
		for m := 0; m < 500; m++ {
			info.Tools = append(info.Tools, connectors.Tool{Name: fmt.Sprintf("method_%03d", m), RequiresApproval: m%2 == 0})
		}
		infos = append(infos, info)
	}
	decls := strings.Repeat("declare const x: {};\n", 5000)
	d := Description(infos, decls, false)
	if len(d) > 8000 {
		t.Errorf("description is %d bytes for 10,000 methods; want it bounded", len(d))
	}
	if strings.Contains(d, "declare const") {
		t.Error("large declarations must not be inlined")
	}
	for _, want := range []string{"- conn0 — a connector: 500 methods (method_000,", "… 488 more); 250 require approval", "use codemode.search and codemode.describe"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q", want)
		}
	}
}

func TestDescriptionInlinesSmallDeclarationsAndUnavailable(t *testing.T) {
	d := Description([]codemode.ConnectorInfo{
		{Name: "a", Tools: []connectors.Tool{{Name: "f"}}},
		{Name: "down", Error: "start: exec: \"nope\": executable file not found\nmore detail"},
	}, "declare const a: { f(input: {}): Promise<unknown>; };\n", false)
	for _, want := range []string{"- a: 1 methods (f)", "- down: unavailable (start: exec: \"nope\": executable file not found)", "```ts\ndeclare const a"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
}
