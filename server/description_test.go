package server

import (
	"fmt"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/tokens"
)

func TestDescriptionIsBounded(t *testing.T) {
	var infos []codemode.ConnectorInfo
	for c := 0; c < 20; c++ {
		info := codemode.ConnectorInfo{Name: fmt.Sprintf("conn%d", c), Description: "A connector. It does things\nwith a second line"}
		for m := 0; m < 500; m++ {
			info.Tools = append(info.Tools, connectors.Tool{Name: fmt.Sprintf("method_%03d", m), RequiresApproval: m%2 == 0})
		}
		infos = append(infos, info)
	}
	d := Description(infos, "", true)
	if n := tokens.Estimate(d); n > 1000 {
		t.Errorf("description is %d tokens for 20 connectors of 500 methods; want it bounded", n)
	}
	if strings.Contains(d, "method_001") || strings.Count(d, "method_000") != 2 {
		t.Error("method names must not be listed, but for the one the examples use (twice)")
	}
	for _, want := range []string{"- conn0 (500 methods): A connector.\n", "find methods with codemode.search and read their types with codemode.describe"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
}

// The examples name a method of a configured connector, never one that is
// not configured.
func TestDescriptionExamplesNameConfiguredMethods(t *testing.T) {
	d := Description([]codemode.ConnectorInfo{
		{Name: "down", Error: "start failed"},
		{Name: "empty"},
		{Name: "files", Tools: []connectors.Tool{{Name: "read_file"}, {Name: "write_file"}}},
	}, "", false)
	for _, want := range []string{`codemode.describe("files.read_file")`, "await files.read_file({"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
	for _, never := range []string{"notes.", "github."} {
		if strings.Contains(d, never) {
			t.Errorf("description names %q, which is not configured:\n%s", never, d)
		}
	}
	if d := Description(nil, "", false); !strings.Contains(d, `codemode.describe("connector.method")`) {
		t.Errorf("with no connector the examples are generic:\n%s", d)
	}
}

func TestDescriptionInlinesSmallDeclarationsAndUnavailable(t *testing.T) {
	d := Description([]codemode.ConnectorInfo{
		{Name: "a", Tools: []connectors.Tool{{Name: "f"}}},
		{Name: "down", Error: "start: exec: \"nope\": executable file not found\nmore detail"},
		{Name: "long", Description: strings.Repeat("word ", 100)},
		{Name: "remote", Error: "connector remote needs a sign-in: not signed in yet", NeedsSignIn: true},
	}, "declare const a: { f(input: {}): Promise<unknown>; };\n", false)
	for _, want := range []string{"- a (1 method)\n", "- down: unavailable (start: exec: \"nope\": executable file not found)", "```ts\ndeclare const a", "- long (0 methods): word word",
		"- remote: needs the user to sign in; its methods are listed once they have"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "not listed here") {
		t.Errorf("inlined declarations, yet the description says they are not:\n%s", d)
	}
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "- long") && len(line) > 200 {
			t.Errorf("a connector's line is %d bytes: %s", len(line), line)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"GitHub's v3 REST API.":               "GitHub's v3 REST API.",
		"Scratch notes. Kept in the store.":   "Scratch notes.",
		"Version 1.2 of the API\nsecond line": "Version 1.2 of the API",
		"Does it work? Yes.":                  "Does it work?",
		"":                                    "",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
