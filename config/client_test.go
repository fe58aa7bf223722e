package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClaudeDesktopFile(t *testing.T) {
	t.Setenv("REMOTE_TOKEN", "rt")
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "claude_desktop.json")
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []Connector{
		{
			Name: "server_everything", SourceName: "server-everything", Line: 3, Kind: KindStdio,
			Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
			Env: map[string]string{"DEBUG": "1", "HOME_DIR": home},
		},
		{
			Name: "memory", SourceName: "memory", Line: 8, Kind: KindStdio,
			Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
		},
		{
			Name: "remote", SourceName: "remote", Line: 12, Kind: KindHTTP,
			URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer rt"},
		},
		{Name: "old_sse", SourceName: "old-sse", Line: 16, Kind: KindSSE, URL: "https://example.com/events", SSE: true},
	}
	if diff := cmp.Diff(want, cfg.Connectors); diff != "" {
		t.Errorf("connectors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Default().Sandbox, cfg.Sandbox); diff != "" {
		t.Errorf("a client file keeps the default settings (-want +got):\n%s", diff)
	}
}

func TestVSCodeFile(t *testing.T) {
	file := filepath.Join("testdata", "vscode", ".vscode", "mcp.json")
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.Abs(filepath.Join("testdata", "vscode"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Connector{
		{
			Name: "memory", SourceName: "memory", Line: 6, Kind: KindStdio,
			Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
			Env: map[string]string{
				"MEMORY_FILE_PATH": filepath.Join(ws, "memory.jsonl"),
				"OVERRIDE":         "from-env", // env beats envFile
				"TOKEN":            `a "quoted" value`,
				"PLAIN":            "plain value",
				"SINGLE":           "${not expanded}",
			},
		},
		{Name: "github", SourceName: "github", Line: 13, Kind: KindHTTP, URL: "https://api.githubcopilot.com/mcp/"},
		{Name: "dev_server", SourceName: "dev-server", Line: 19, Kind: KindStdio, Command: "node", Args: []string{"build/index.js"}},
	}
	if diff := cmp.Diff(want, cfg.Connectors); diff != "" {
		t.Errorf("connectors (-want +got):\n%s", diff)
	}
	var warned []string
	for _, w := range cfg.Warnings {
		warned = append(warned, w.Field)
	}
	if diff := cmp.Diff([]string{"servers.dev-server.dev"}, warned); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\n%v", diff, cfg.Warnings)
	}
}

func TestClientEntries(t *testing.T) {
	tests := []struct {
		name, src string
		want      []Connector
		warnings  []string // fields warned about
	}{
		{
			name: "url without type is streamable HTTP",
			src:  `{"mcpServers": {"a": {"url": "http://127.0.0.1:3000/mcp"}}}`,
			want: []Connector{{Name: "a", SourceName: "a", Line: 1, Kind: KindHTTP, URL: "http://127.0.0.1:3000/mcp"}},
		},
		{
			name: "url ending in /sse without type is SSE",
			src:  `{"mcpServers": {"a": {"url": "http://127.0.0.1:3000/sse"}}}`,
			want: []Connector{{Name: "a", SourceName: "a", Line: 1, Kind: KindSSE, URL: "http://127.0.0.1:3000/sse", SSE: true}},
		},
		{
			name: "explicit http type wins over /sse",
			src:  `{"servers": {"a": {"type": "http", "url": "http://127.0.0.1:3000/sse"}}}`,
			want: []Connector{{Name: "a", SourceName: "a", Line: 1, Kind: KindHTTP, URL: "http://127.0.0.1:3000/sse"}},
		},
		{
			name: "Cline entry",
			src: `{"mcpServers": {"c": {"command": "node", "args": ["s.js"], "disabled": false, "timeout": 90,
				"autoApprove": ["x"], "transportType": "stdio"}}}`,
			want:     []Connector{{Name: "c", SourceName: "c", Line: 1, Kind: KindStdio, Command: "node", Args: []string{"s.js"}, Timeout: 90 * time.Second}},
			warnings: []string{"mcpServers.c.autoApprove"},
		},
		{
			name: "Roo Code entry",
			src: `{"mcpServers": {"r": {"type": "streamable-http", "url": "https://x/mcp", "alwaysAllow": [],
				"disabledTools": ["drop_*"], "watchPaths": ["a"], "headers": {"X": "y"}}}}`,
			want: []Connector{{
				Name: "r", SourceName: "r", Line: 1, Kind: KindHTTP, URL: "https://x/mcp",
				Headers: map[string]string{"X": "y"}, Tools: Filter{Exclude: []string{"drop_*"}},
			}},
			warnings: []string{"mcpServers.r.alwaysAllow", "mcpServers.r.watchPaths"},
		},
		{
			name: "Windsurf serverUrl",
			src:  `{"mcpServers": {"w": {"serverUrl": "https://x/mcp"}}}`,
			want: []Connector{{Name: "w", SourceName: "w", Line: 1, Kind: KindHTTP, URL: "https://x/mcp"}},
		},
		{
			name:     "disabled entries are skipped",
			src:      `{"mcpServers": {"off": {"command": "x", "disabled": true, "whatever": 1}, "on": {"command": "y"}}}`,
			want:     []Connector{{Name: "on", SourceName: "on", Line: 1, Kind: KindStdio, Command: "y"}},
			warnings: []string{"mcpServers.off"},
		},
		{
			name: "our own options in an entry",
			src: "mcpServers:\n  fs:\n    command: npx\n    approve: [\"write_*\"]\n    timeout: 10s\n" +
				"    revert: {write_file: \"() => 1\"}\n",
			want: []Connector{{
				Name: "fs", SourceName: "fs", Line: 2, Kind: KindStdio, Command: "npx",
				Approve: []string{"write_*"}, Timeout: 10 * time.Second, Revert: map[string]string{"write_file": "() => 1"},
			}},
		},
		{
			name: "reserved word is prefixed",
			src:  `{"mcpServers": {"delete": {"command": "x"}}}`,
			want: []Connector{{Name: "_delete", SourceName: "delete", Line: 1, Kind: KindStdio, Command: "x"}},
		},
		{
			name: "mixed with native sections, in file order",
			src:  "sandbox: {timeout: 5s}\nmcpServers:\n  m: {command: x}\nconnectors:\n  notes: {builtin: notes}\n",
			want: []Connector{
				{Name: "m", SourceName: "m", Line: 3, Kind: KindStdio, Command: "x"},
				{Name: "notes", SourceName: "notes", Line: 5, Kind: KindBuiltin, Builtin: "notes"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "mcp.json")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Connectors); diff != "" {
				t.Errorf("connectors (-want +got):\n%s", diff)
			}
			var warned []string
			for _, w := range cfg.Warnings {
				warned = append(warned, w.Field)
				if w.File != "mcp.json" || w.Line == 0 {
					t.Errorf("warning lacks file or line: %+v", w)
				}
			}
			if diff := cmp.Diff(tt.warnings, warned); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientEntryErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown key", `{"mcpServers": {"a": {"command": "x", "arg": []}}}`,
			`mcp.json:1:39: mcpServers.a.arg: unknown key (did you mean "args"?)`},
		{"unknown key far from any", `{"mcpServers": {"a": {"command": "x", "zzzzzz": 1}}}`,
			`mcp.json:1:39: mcpServers.a.zzzzzz: unknown key; known keys: ` + strings.Join(clientKeys, ", ")},
		{"both command and url", `{"mcpServers": {"a": {"command": "x", "url": "https://x"}}}`,
			`mcp.json:1:17: mcpServers.a: has both command and url; an entry runs a command or connects to a URL`},
		{"typo of command", `{"mcpServers": {"a": {"comand": "x"}}}`,
			`mcp.json:1:23: mcpServers.a.comand: unknown key (did you mean "command"?)`},
		{"path pattern", `{"mcpServers": {"a": {"command": "x", "approve": ["path:/x"]}}}`,
			`mcp.json:1:51: mcpServers.a.approve[0]: "path:/x": path: patterns match HTTP paths, which only the methods of OpenAPI connectors have`},
		{"neither", `{"mcpServers": {"a": {"args": []}}}`,
			`mcp.json:1:17: mcpServers.a: needs command (a stdio server) or url (a remote server)`},
		{"sse type with command", `{"servers": {"a": {"type": "sse", "command": "x"}}}`,
			`mcp.json:1:28: servers.a.type: type sse needs a url, but this entry has a command`},
		{"stdio type with url", `{"servers": {"a": {"type": "stdio", "url": "https://x"}}}`,
			`mcp.json:1:28: servers.a.type: type stdio needs a command, but this entry has a url`},
		{"unknown type", `{"servers": {"a": {"type": "websocket", "url": "https://x"}}}`,
			`mcp.json:1:28: servers.a.type: must be one of http, sse, stdio, streamable-http, streamableHttp; got "websocket"`},
		{"headers with command", `{"servers": {"a": {"command": "x", "headers": {}}}}`,
			`mcp.json:1:36: servers.a.headers: headers applies to url entries only`},
		{"args with url", `{"servers": {"a": {"url": "https://x", "args": []}}}`,
			`mcp.json:1:40: servers.a.args: args applies to command entries only`},
		{"entry not an object", `{"mcpServers": {"a": "npx"}}`,
			`mcp.json:1:22: mcpServers.a: expected a server entry such as {"command": "npx", "args": […]} or {"url": "https://…"}, got the string "npx"`},
		{"servers for server", "servers:\n  transport: http\n",
			`mcp.json:2:14: servers.transport: expected a server entry such as {"command": "npx", "args": […]} or {"url": "https://…"} (for codemode-mcp's own settings, the section is "server:"), got the string "http"`},
		{"sanitized names collide", `{"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}`,
			`mcp.json:1:42: mcpServers.a_b: connector "a_b" is already defined at line 1 (mcpServers.a-b)`},
		{"sanitized name still invalid", `{"mcpServers": {"console": {"command": "x"}}}`,
			`mcp.json:1:17: mcpServers.console: connector name "console" would shadow the JavaScript global console`},
		{"VS Code input", `{"servers": {"a": {"command": "x", "env": {"K": "${input:api-key}"}}}}`,
			`mcp.json:1:49: servers.a.env.K: ${input:api-key} asks VS Code to prompt for a value, which codemode-mcp cannot do; use an environment variable instead, e.g. ${env:API_KEY}`},
		{"negative seconds", `{"mcpServers": {"a": {"command": "x", "timeout": -1}}}`,
			`mcp.json:1:50: mcpServers.a.timeout: expected a number of seconds or a duration such as "30s", got -1`},
		{"missing envFile", `{"servers": {"a": {"command": "x", "envFile": "/nonexistent/.env"}}}`,
			`mcp.json:1:47: servers.a.envFile: envFile: open /nonexistent/.env: no such file or directory`},
		{"envFile a directory", `{"servers": {"a": {"command": "x", "envFile": "/"}}}`,
			`mcp.json:1:47: servers.a.envFile: envFile: / is not a regular file`},
		{"clash with native connector", "connectors:\n  a: {builtin: notes}\nmcpServers:\n  a: {command: x}\n",
			`mcp.json:4:3: mcpServers.a: connector "a" is already defined at line 2 (connectors.a)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "mcp.json")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", cfg.Connectors)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestEnvFile(t *testing.T) {
	tests := []struct {
		name, content string
		want          map[string]string
		wantErr       string
	}{
		{"plain", "A=1\n\n# c\nB = two words # note\r\n", map[string]string{"A": "1", "B": "two words"}, ""},
		{"quotes", "A=\"x\\ny\"\nB='$HOME'\nexport C=c\n", map[string]string{"A": "x\ny", "B": "$HOME", "C": "c"}, ""},
		{"empty value", "A=\n", map[string]string{"A": ""}, ""},
		{"no equals", "A\n", nil, ":1: expected KEY=VALUE"},
		{"bad name", "1A=x\n", nil, ":1: expected KEY=VALUE"},
		{"open quote", "A=\"x\n", nil, ":1: unterminated double quote"},
		{"bad escape", "A=\"x\\qy\" # c\n", nil, ":1: unterminated double quote, or a bad escape in it"},
		{"go escapes", `A="\t\\\x41\u00e9"` + "\n", map[string]string{"A": "\t\\Aé"}, ""},
		{"comment after a quote", "A=\"x\\\"y\" # c\n", map[string]string{"A": "x\"y"}, ""},
		// What follows a closing quote is a comment or nothing: not a
		// second value that would be dropped without a word.
		{"text after a double quote", "A=\"x\"y\n", nil, `:1: text after the closing quote (a comment is " # …")`},
		{"text after a single quote", "A='x' y\n", nil, `:1: text after the closing quote (a comment is " # …")`},
		{"single quote then a comment", "A='x' # c\n", map[string]string{"A": "x"}, ""},
		{"single quotes, refused escapes", `A='\q'` + "\n", map[string]string{"A": `\q`}, ""},
		// Go's escapes, no others; and a value is text.
		{"single quote escaped", `A="it\'s"` + "\n", nil, ":1: unterminated double quote, or a bad escape in it"},
		{"short octal", `A="\0"` + "\n", nil, ":1: unterminated double quote, or a bad escape in it"},
		{"surrogate", `A="\ud800"` + "\n", nil, ":1: unterminated double quote, or a bad escape in it"},
		{"NUL", `A="a\x00b"` + "\n", nil, ":1: the value holds a NUL byte, which no environment variable can"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readEnvFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), path+tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, path+tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := readEnvFile(t.TempDir()); err == nil {
		t.Error("a directory was read as an envFile")
	}
}

// The README has users add codemode-mcp's own entry to the file they may
// then serve from; that entry is skipped with a warning, not a connector.
func TestClientSelfEntry(t *testing.T) {
	const byName = `codemode-mcp's own entry (named "codemode"); skipped: codemode-mcp does not connect to itself`
	const byCommand = `codemode-mcp's own entry (it runs codemode-mcp serve); skipped: codemode-mcp does not connect to itself`
	other := Connector{Name: "other", SourceName: "other", Line: 7, Kind: KindStdio, Command: "/bin/cat"}
	tests := []struct {
		name, src string
		want      []Connector
		warnings  []string
	}{
		{
			name: "Claude Desktop file as in the README",
			src: `{
  "mcpServers": {
    "codemode": {
      "command": "/usr/local/bin/codemode-mcp",
      "args": ["serve", "--config", "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"]
    },
    "other": {"command": "/bin/cat"}
  }
}`,
			want:     []Connector{other},
			warnings: []string{"mcp.json:3:5: mcpServers.codemode: " + byName},
		},
		{
			name: "named codemode, any command",
			src: `{"mcpServers": {
  "codemode": {"command": "/tmp/cm", "args": ["serve", "--config", "/tmp/cd.json"]},
  "a": {"command": "x"}}}`,
			want:     []Connector{{Name: "a", SourceName: "a", Line: 3, Kind: KindStdio, Command: "x"}},
			warnings: []string{"mcp.json:2:3: mcpServers.codemode: " + byName},
		},
		{
			name: "named codemode over HTTP",
			src: `{"mcpServers": {
  "codemode": {"type": "http", "url": "http://127.0.0.1:8931/mcp", "headers": {"Authorization": "Bearer ${UNSET_TOKEN}"}}}}`,
			warnings: []string{"mcp.json:2:3: mcpServers.codemode: " + byName},
		},
		{
			name: "VS Code file as in the README",
			src: `{"servers": {
  "codemode": {"type": "stdio", "command": "/usr/local/bin/codemode-mcp",
    "args": ["serve", "--config", "${workspaceFolder}/codemode.yaml"]}}}`,
			warnings: []string{"mcp.json:2:3: servers.codemode: " + byName},
		},
		{
			name: "other name, codemode-mcp serve",
			src: `{"mcpServers": {
  "cm": {"command": "/usr/local/bin/codemode-mcp", "args": ["serve"]},
  "a": {"command": "x"}}}`,
			want:     []Connector{{Name: "a", SourceName: "a", Line: 3, Kind: KindStdio, Command: "x"}},
			warnings: []string{"mcp.json:2:3: mcpServers.cm: " + byCommand},
		},
		{
			name:     "codemode-mcp serve on PATH, with a variable in the path",
			src:      `{"mcpServers": {"gw": {"command": "${HOME}/go/bin/codemode-mcp", "args": ["serve", "--transport", "stdio"]}}}`,
			warnings: []string{"mcp.json:1:17: mcpServers.gw: " + byCommand},
		},
		{
			name:     "Windows path",
			src:      `{"mcpServers": {"gw": {"command": "C:\\Tools\\codemode-mcp.exe", "args": ["serve"]}}}`,
			warnings: []string{"mcp.json:1:17: mcpServers.gw: " + byCommand},
		},
		{
			name: "codemode-mcp with another subcommand is a connector",
			src:  `{"mcpServers": {"cm": {"command": "/usr/local/bin/codemode-mcp", "args": ["version"]}}}`,
			want: []Connector{{Name: "cm", SourceName: "cm", Line: 1, Kind: KindStdio, Command: "/usr/local/bin/codemode-mcp", Args: []string{"version"}}},
		},
		{
			name: "a different program's serve is a connector",
			src:  `{"mcpServers": {"cm": {"command": "codemode-mcp-proxy", "args": ["serve"]}}}`,
			want: []Connector{{Name: "cm", SourceName: "cm", Line: 1, Kind: KindStdio, Command: "codemode-mcp-proxy", Args: []string{"serve"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "mcp.json")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Connectors); diff != "" {
				t.Errorf("connectors (-want +got):\n%s", diff)
			}
			var warned []string
			for _, w := range cfg.Warnings {
				warned = append(warned, w.String())
			}
			if diff := cmp.Diff(tt.warnings, warned); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// Only client files skip codemode-mcp's own entry: in the native format a
// connector named codemode is still a mistake, whatever it runs.
func TestNativeSelfEntryIsAnError(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"builtin", "connectors:\n  codemode:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors.codemode: connector name "codemode" is reserved for the sandbox's own API`},
		{"codemode-mcp serve", "connectors:\n  codemode:\n    command: /usr/local/bin/codemode-mcp\n    args: [serve]\n",
			`codemode.yaml:2:3: connectors.codemode: connector name "codemode" is reserved for the sandbox's own API`},
		{"next to a client section", "mcpServers:\n  other: {command: x}\nconnectors:\n  codemode: {command: codemode-mcp, args: [serve]}\n",
			`codemode.yaml:4:3: connectors.codemode: connector name "codemode" is reserved for the sandbox's own API`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "codemode.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", cfg.Connectors)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}
