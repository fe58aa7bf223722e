package config

import (
	"strings"
	"testing"
)

func TestJSONCToJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\n  // a comment\n  \"a\": 1, // another\n}", "{\n              \n  \"a\": 1            \n}"},
		{`{"a": /* x */ 1}`, `{"a":         1}`},
		{`{"u": "http://x//y", "s": "/* not */"}`, `{"u": "http://x//y", "s": "/* not */"}`},
		{`{"e": "a\"//b"}`, `{"e": "a\"//b"}`},
		{`{"l": [1, 2, ], }`, `{"l": [1, 2  ]  }`},
		{"a: 1 # yaml // stays", "a: 1 # yaml // stays"},
		{`{"open": /* never closed`, `{"open": /* never closed`},
	} {
		if got := string(jsoncToJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("jsoncToJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A VS Code mcp.json with comments and trailing commas is read, and an
// error in it still names its line.
func TestVSCodeFileWithComments(t *testing.T) {
	src := `{
  // Servers for this workspace.
  "servers": {
    /* the memory server */
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"], // pinned elsewhere
    },
  },
}`
	cfg, err := parse([]byte(src), "mcp.json", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Connectors) != 1 || cfg.Connectors[0].Name != "memory" || cfg.Connectors[0].Command != "npx" {
		t.Fatalf("connectors = %+v", cfg.Connectors)
	}
	bad := strings.Replace(src, `"command": "npx"`, `"command": ["npx"]`, 1)
	_, err = parse([]byte(bad), "mcp.json", func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "mcp.json:6") {
		t.Fatalf("error %v, want one at mcp.json:6", err)
	}
}
