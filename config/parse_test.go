package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDefault(t *testing.T) {
	t.Setenv(EnvToken, "")
	got := Default()
	want := &Config{
		Server: Server{Name: "codemode", Transport: "stdio", Addr: "127.0.0.1:8931", DescriptionBudget: 1500, StartTimeout: 10 * time.Second},
		Store:  Store{MaxExecutions: 50, PausedTTL: 24 * time.Hour, MaxRunLog: 64 << 20, Synchronous: "normal", Lease: 15 * time.Second},
		Sandbox: Sandbox{
			Timeout: 60 * time.Second, TaskTimeout: 30 * time.Minute, MemoryLimit: 256 << 20, MaxResultChars: 24000, Isolation: "process", TypeCheck: "off", MemoryLimiter: "system",
		},
		Approvals:  Approvals{Elicitation: true, Tools: true, Console: true},
		Connectors: []Connector{{Name: "notes", SourceName: "notes", Kind: KindBuiltin, Builtin: "notes"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseEmptyGivesDefaultsWithoutConnectors(t *testing.T) {
	t.Setenv(EnvToken, "")
	for _, src := range []string{"", "# nothing\n", "{}", "---\n"} {
		got, err := Parse([]byte(src), "")
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		want := Default()
		want.Connectors = nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", src, diff)
		}
	}
}

func TestParseFull(t *testing.T) {
	t.Setenv("CODEMODE_TOKEN", "s3cret")
	t.Setenv("REMOTE_TOKEN", "rt")
	t.Setenv("GITHUB_TOKEN", "gh")
	t.Setenv("BILLING_SECRET", "cs")
	t.Setenv("TICKETS_SECRET", "ts")
	t.Setenv("LOG_LEVEL", "")
	t.Setenv("NODE_OPTIONS", "")
	file := filepath.Join("testdata", "full.yaml")
	got, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Path: file,
		Server: Server{
			Name: "gateway", Transport: "http", Addr: "127.0.0.1:9000", AuthToken: "s3cret", DescriptionBudget: 800, StartTimeout: 20 * time.Second,
			AuthTokenFrom: "server.auth_token in " + file,
			HTTP: HTTP{
				AllowedOrigins: []string{"https://app.example.com", "http://localhost:6274"},
				AllowedHosts:   []string{"mcp.example.com", "gw.lan:9000"},
				TLSCert:        filepath.Join(dir, "tls", "cert.pem"), TLSKey: filepath.Join(dir, "tls", "key.pem"),
				MaxBody: 1 << 20, ReadTimeout: 10 * time.Second, WriteTimeout: 20 * time.Second, IdleTimeout: time.Minute,
				MaxConnections: 8,
			},
		},
		Store: Store{
			Path: filepath.Join(dir, "data", "codemode.db"), MaxExecutions: 10, PausedTTL: 2 * time.Hour, MaxRunLog: 8 << 20, Synchronous: "full",
			CacheDir: filepath.Join(dir, "cache"), Lease: 15 * time.Second,
		},
		Sandbox: Sandbox{
			Timeout: 30 * time.Second, TaskTimeout: 30 * time.Minute, MemoryLimit: 1 << 30, MaxResultChars: 1000, Isolation: "process",
			MaxCalls: 100, MaxStackDepth: 500, TypeCheck: "off", MemoryLimiter: "system",
		},
		Approvals: Approvals{Elicitation: false, Tools: false, Console: false},
		Connectors: []Connector{
			{Name: "notes", SourceName: "notes", Line: 37, Kind: KindBuiltin, Builtin: "notes"},
			{
				Name: "files", SourceName: "files", Line: 39, Kind: KindStdio,
				Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "."},
				Env:     map[string]string{"LOG": "info"},
				Cwd:     filepath.Join(dir, "work"),
				Inherit: Inherit{Names: []string{"GITHUB_TOKEN", "NODE_OPTIONS"}},
				Approve: []string{"write_*", "edit_*", "move_*", "create_*"},
				Revert:  map[string]string{"write_file": "(args, result) => files.delete_file({ path: `${args.path}` })"},
				Timeout: 5 * time.Second, StartTimeout: time.Minute, Description: "Local files",
			},
			{
				Name: "remote", SourceName: "remote", Line: 51, Kind: KindHTTP,
				URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer rt"},
				Tools: Filter{Include: []string{"*"}, Exclude: []string{"dangerous_*"}},
			},
			{Name: "legacy", SourceName: "legacy", Line: 55, Kind: KindSSE, URL: "http://127.0.0.1:3001/sse", SSE: true},
			{
				Name: "github", SourceName: "github", Line: 58, Kind: KindOpenAPI,
				OpenAPI: filepath.Join(dir, "github.json"), BaseURL: "https://api.github.com",
				Headers:    map[string]string{"User-Agent": "codemode-mcp"},
				Auth:       &Auth{Bearer: "gh"},
				Operations: Filter{Include: []string{"issues/*", "repos/get", "tag:issues", "path:/repos/*"}, Exclude: []string{}},
				NoApprove:  []string{"search/*"},
			},
			{
				Name: "petstore", SourceName: "petstore", Line: 65, Kind: KindOpenAPI,
				OpenAPI: "https://petstore3.swagger.io/api/v3/openapi.json",
				Auth:    &Auth{APIKey: &APIKey{In: "query", Name: "key", Value: "$ecret"}},
			},
			{
				Name: "billing", SourceName: "billing", Line: 69, Kind: KindOpenAPI,
				OpenAPI: filepath.Join(dir, "billing.yaml"),
				Auth: &Auth{OAuth2: &OAuth2{
					TokenURL: "https://auth.example.com/token", ClientID: "codemode", ClientSecret: "cs", Scopes: []string{"read", "write"},
				}},
			},
			{
				Name: "tickets", SourceName: "tickets", Line: 77, Kind: KindHTTP, URL: "https://tickets.example.com/mcp",
				OAuth: &OAuth{ClientID: "codemode", ClientSecret: "ts", Scopes: []string{"tickets:read", "tickets:write"}},
			},
			{
				Name: "machine", SourceName: "machine", Line: 83, Kind: KindHTTP, URL: "https://machine.example.com/mcp",
				OAuth: &OAuth{Grant: "client_credentials", ClientID: "m2m", PrivateKey: filepath.Join(dir, "m2m.pem")},
			},
			{
				Name: "discovered", SourceName: "discovered", Line: 86, Kind: KindHTTP, URL: "https://open.example.com/mcp",
				OAuth: &OAuth{ClientMetadataURL: "https://codemode.example.com/client.json"},
			},
		},
		// The token, GITHUB_TOKEN (inherited by files), REMOTE_TOKEN,
		// GITHUB_TOKEN again (github's bearer) and BILLING_SECRET.
		EnvValues: []string{"s3cret", "gh", "rt", "gh", "cs", "ts"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load(%s) mismatch (-want +got):\n%s", file, diff)
	}
}

// CODEMODE_TOKEN sets the bearer token when the configuration sets none:
// without a file, with a file that has no auth_token or an empty one. A
// token in the file wins, with a warning when the two differ. Where the
// token came from is kept for the log, and the token is a secret.
func TestTokenFromTheEnvironment(t *testing.T) {
	const env = "env-token-5d1c"
	tests := []struct {
		name    string
		env     string
		src     string // "" for Default()
		token   string
		from    string
		warning string
	}{
		{"no file", env, "", env, EnvToken, ""},
		{"no file, no variable", "", "", "", "", ""},
		{"no auth_token", env, "store:\n  max_executions: 5\n", env, EnvToken, ""},
		{"empty auth_token", env, "server:\n  auth_token: \"\"\n", env, EnvToken, ""},
		{"the example's form", env, "server:\n  auth_token: ${CODEMODE_TOKEN:-}\n", env, "server.auth_token in codemode.yaml", ""},
		{"the file's own", "", "server:\n  auth_token: file-token-77e1\n", "file-token-77e1", "server.auth_token in codemode.yaml", ""},
		{"both", env, "server:\n  auth_token: file-token-77e1\n", "file-token-77e1", "server.auth_token in codemode.yaml",
			"codemode.yaml:2:15: server.auth_token: CODEMODE_TOKEN is set too, to another token, and is not used: server.auth_token wins"},
		// White space around a token (a token file's newline) is dropped:
		// a client's Authorization header never carries it.
		{"no file, a newline", env + "\n", "", env, EnvToken, ""},
		{"no auth_token, a newline", " " + env + "\r\n", "store:\n  max_executions: 5\n", env, EnvToken, ""},
		{"the example's form, a newline", env + "\n", "server:\n  auth_token: ${CODEMODE_TOKEN:-}\n", env, "server.auth_token in codemode.yaml", ""},
		{"blank auth_token", env, "server:\n  auth_token: \" \"\n", env, EnvToken, ""},
		{"the same in both, one with a newline", env + "\n", "server:\n  auth_token: " + env + "\n", env, "server.auth_token in codemode.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvToken, tt.env)
			cfg := Default()
			if tt.src != "" {
				var err error
				if cfg, err = Parse([]byte(tt.src), "codemode.yaml"); err != nil {
					t.Fatal(err)
				}
			}
			if cfg.Server.AuthToken != tt.token || cfg.Server.AuthTokenFrom != tt.from {
				t.Errorf("token %q from %q, want %q from %q", cfg.Server.AuthToken, cfg.Server.AuthTokenFrom, tt.token, tt.from)
			}
			var warnings []string
			for _, w := range cfg.Warnings {
				warnings = append(warnings, w.String())
			}
			if got := strings.Join(warnings, "\n"); got != tt.warning {
				t.Errorf("warnings %q, want %q", got, tt.warning)
			}
			if tt.token != "" && !slices.Contains(cfg.Secrets(), tt.token) {
				t.Errorf("Secrets() %q lacks the token", cfg.Secrets())
			}
		})
	}
}

// TestParseErrors checks that each problem is reported with the file, line,
// column and field, in the documented format.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the whole message
	}{
		{"unknown top-level key", "sever:\n  name: x\n",
			`codemode.yaml:1:1: sever: unknown key (did you mean "server"?)`},
		{"unknown key without near miss", "store:\n  colour: red\n",
			`codemode.yaml:2:3: store.colour: unknown key; known keys: path, max_executions, paused_ttl, max_run_log, synchronous, cache_dir, lease, audit_retention, postgres`},
		{"unknown connector key", "connectors:\n  files:\n    comand: npx\n",
			`codemode.yaml:3:5: connectors.files.comand: unknown key (did you mean "command"?)`},
		{"camelCase key", "connectors:\n  gh:\n    openapi: x.json\n    baseUrl: https://x\n",
			`codemode.yaml:4:5: connectors.gh.baseUrl: unknown key (did you mean "base_url"?)`},
		{"NUL in an argument", "connectors:\n  x:\n    command: /bin/cat\n    args: [\"a\\0b\"]\n",
			`codemode.yaml:4:12: connectors.x.args[0]: holds a NUL byte, which no argument, environment variable, header or URL can`},
		{"bad duration", "sandbox:\n  timeout: banana\n",
			`codemode.yaml:2:12: sandbox.timeout: expected a duration such as "60s", "5m" or "24h", got "banana"`},
		{"duration without unit", "store:\n  paused_ttl: 60\n",
			`codemode.yaml:2:15: store.paused_ttl: expected a duration such as "60s", "5m" or "24h", got the number 60 (a duration needs a unit: "60s"?)`},
		{"short lease", "store:\n  lease: 500ms\n",
			`codemode.yaml:2:10: store.lease: must be at least 1s (a process renews its lease every third of it)`},
		{"zero timeout", "sandbox:\n  timeout: 0s\n",
			`codemode.yaml:2:12: sandbox.timeout: must be a positive duration`},
		{"zero task timeout", "sandbox:\n  task_timeout: 0s\n",
			`codemode.yaml:2:17: sandbox.task_timeout: must be a positive duration`},
		{"bad size", "sandbox:\n  memory_limit: 256 parsecs\n",
			`codemode.yaml:2:17: sandbox.memory_limit: expected a size such as "256MiB", "1GiB" or "512MB", got "256 parsecs" (unknown unit "parsecs"; use B, KB, MB, GB, KiB, MiB or GiB)`},
		{"zero size", "sandbox:\n  memory_limit: 0\n",
			`codemode.yaml:2:17: sandbox.memory_limit: must be a positive size`},
		{"not a number", "store:\n  max_executions: many\n",
			`codemode.yaml:2:19: store.max_executions: expected a whole number, got "many"`},
		{"float for int", "sandbox:\n  max_result_chars: 1.5\n",
			`codemode.yaml:2:21: sandbox.max_result_chars: expected a whole number, got the number 1.5`},
		{"non-positive limit", "store:\n  max_executions: 0\n",
			`codemode.yaml:2:19: store.max_executions: must be a positive number, got 0`},
		{"zero run log quota", "store:\n  max_run_log: 0\n",
			`codemode.yaml:2:16: store.max_run_log: must be a positive size`},
		{"negative limit", "sandbox:\n  max_calls: -1\n",
			`codemode.yaml:2:14: sandbox.max_calls: must be at least 0, got -1`},
		{"bad bool", "approvals:\n  elicitation: maybe\n",
			`codemode.yaml:2:16: approvals.elicitation: expected true or false, got "maybe"`},
		{"mapping for string", "server:\n  name: {a: 1}\n",
			`codemode.yaml:2:9: server.name: expected a string, got a mapping`},
		{"list for mapping", "server:\n  - a\n",
			`codemode.yaml:2:3: server: expected a mapping, got a list`},
		{"bad transport", "server:\n  transport: htp\n",
			`codemode.yaml:2:14: server.transport: must be one of stdio, sse, http; got "htp" (did you mean "http"?)`},
		{"bad addr", "server:\n  addr: localhost\n",
			`codemode.yaml:2:9: server.addr: expected host:port such as "127.0.0.1:8931", got "localhost"`},
		{"bad isolation", "sandbox:\n  isolation: vm\n",
			`codemode.yaml:2:14: sandbox.isolation: must be one of inprocess, process; got "vm"`},
		{"bad synchronous", "store:\n  synchronous: off\n",
			`codemode.yaml:2:16: store.synchronous: must be one of normal, full; got "off"`},
		{"empty store path", "store:\n  path: \"\"\n",
			`codemode.yaml:2:9: store.path: must not be empty`},
		{"bad connector name", "connectors:\n  my-files:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors.my-files: connector name "my-files" is not a valid JavaScript identifier (letters, digits, _ and $; not starting with a digit); try "my_files"`},
		{"reserved connector name", "connectors:\n  codemode:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors.codemode: connector name "codemode" is reserved for the sandbox's own API`},
		{"global connector name", "connectors:\n  JSON:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors.JSON: connector name "JSON" would shadow the JavaScript global JSON`},
		{"connector and namespace", "connectors:\n  github:\n    builtin: notes\n  github.issues:\n    command: x\n",
			`codemode.yaml:4:3: connectors["github.issues"]: connector "github.issues" clashes with connector "github" at line 2 (connectors.github): "github" cannot be both a connector and the namespace of "github.issues"; rename one (for example "github" to "github.core")`},
		{"namespace and connector", "connectors:\n  mcp.a.b:\n    builtin: notes\n  mcp.c:\n    command: x\n  mcp.a:\n    command: y\n",
			`codemode.yaml:6:3: connectors["mcp.a"]: connector "mcp.a" clashes with connector "mcp.a.b" at line 2 (connectors["mcp.a.b"]): "mcp.a" cannot be both a connector and the namespace of "mcp.a.b"; rename one (for example "mcp.a" to "mcp.a.core")`},
		{"bad namespace segment", "connectors:\n  github.pull-requests:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors["github.pull-requests"]: connector name "pull-requests" is not a valid JavaScript identifier (letters, digits, _ and $; not starting with a digit) (in connector name "github.pull-requests"); try "github.pull_requests"`},
		{"empty namespace segment", "connectors:\n  github..issues:\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors["github..issues"]: connector name "github..issues" has an empty segment: dots separate namespaces, as in "github.issues"`},
		{"duplicate connector", "connectors:\n  a:\n    builtin: notes\n  a:\n    command: x\n",
			`codemode.yaml:4:3: connectors.a: duplicate key "a" (first defined at line 2)`},
		{"duplicate key in section", "sandbox:\n  timeout: 1s\n  timeout: 2s\n",
			`codemode.yaml:3:3: sandbox.timeout: duplicate key "timeout" (first defined at line 2)`},
		{"no kind", "connectors:\n  x:\n    description: nothing\n",
			`codemode.yaml:2:3: connectors.x: no source: set one of builtin (a native connector), command (a stdio MCP server), url (an MCP server over HTTP) or openapi (an OpenAPI document)`},
		{"empty connector", "connectors:\n  x:\n",
			`codemode.yaml:2:3: connectors.x: empty connector: set one of builtin (a native connector), command (a stdio MCP server), url (an MCP server over HTTP) or openapi (an OpenAPI document)`},
		{"two kinds", "connectors:\n  x:\n    command: npx\n    url: https://x\n",
			`codemode.yaml:4:5: connectors.x.url: a connector has exactly one of builtin, command, url or openapi; this one already has command (line 3)`},
		{"unknown builtin", "connectors:\n  x:\n    builtin: note\n",
			`codemode.yaml:3:14: connectors.x.builtin: unknown builtin "note" (did you mean "notes"?); known: notes`},
		{"sse without url", "connectors:\n  x:\n    command: srv\n    sse: true\n",
			`codemode.yaml:4:5: connectors.x.sse: sse does not apply to a command connector (only to url connectors)`},
		{"args with url", "connectors:\n  x:\n    url: https://x/mcp\n    args: [a]\n",
			`codemode.yaml:4:5: connectors.x.args: args does not apply to a url connector (only to command connectors)`},
		{"tools on openapi", "connectors:\n  x:\n    openapi: a.json\n    tools: [a]\n",
			`codemode.yaml:4:5: connectors.x.tools: tools does not apply to an openapi connector (only to builtin, command or url connectors)`},
		{"bad typecheck", "sandbox:\n  typecheck: eslint\n",
			`codemode.yaml:2:14: sandbox.typecheck: must be one of off, tsc; got "eslint"`},
		{"forward_unknown on builtin", "connectors:\n  x:\n    builtin: notes\n    forward_unknown: true\n",
			`codemode.yaml:4:5: connectors.x.forward_unknown: forward_unknown does not apply to a builtin connector (only to command or url connectors)`},
		{"start timeout on an openapi connector", "connectors:\n  x:\n    openapi: x.json\n    start_timeout: 5s\n",
			`codemode.yaml:4:5: connectors.x.start_timeout: start_timeout does not apply to an openapi connector (only to command or url connectors)`},
		{"zero start timeout", "connectors:\n  x:\n    command: srv\n    start_timeout: 0s\n",
			`codemode.yaml:4:20: connectors.x.start_timeout: must be a positive duration`},
		{"zero server start timeout", "server:\n  start_timeout: 0\n",
			`codemode.yaml:2:18: server.start_timeout: must be a positive duration`},
		{"bad url", "connectors:\n  x:\n    url: example.com/mcp\n",
			`codemode.yaml:3:10: connectors.x.url: expected an http(s) URL such as "https://example.com/mcp", got "example.com/mcp"`},
		{"bad openapi scheme", "connectors:\n  x:\n    openapi: ftp://x/a.json\n",
			`codemode.yaml:3:14: connectors.x.openapi: expected a file path or an http(s) URL, got "ftp://x/a.json"`},
		// A URL refused is quoted without what may be a credential: its
		// user information, query and fragment.
		{"bad url with credentials", "connectors:\n  x:\n    url: \"example.com/mcp?token=sk-live-1a2b#sk-frag\"\n",
			`codemode.yaml:3:10: connectors.x.url: expected an http(s) URL such as "https://example.com/mcp", got "example.com/mcp?…"`},
		{"bad url with user information", "connectors:\n  x:\n    url: \"bob:sk-live-1a2b@example.com/mcp\"\n",
			`codemode.yaml:3:10: connectors.x.url: expected an http(s) URL such as "https://example.com/mcp", got "…@example.com/mcp"`},
		{"bad url with a password holding a question mark", "connectors:\n  x:\n    url: \"ftp://bob:sk?live@example.com/mcp\"\n",
			`codemode.yaml:3:10: connectors.x.url: expected an http(s) URL such as "https://example.com/mcp", got "ftp://…@example.com/mcp"`},
		{"bad openapi scheme with credentials", "connectors:\n  x:\n    openapi: \"ftp://bob:sk-live-1a2b@x/a.json?k=sk-live-3c4d\"\n",
			`codemode.yaml:3:14: connectors.x.openapi: expected a file path or an http(s) URL, got "ftp://…@x/a.json?…"`},
		{"bad glob", "connectors:\n  x:\n    builtin: notes\n    approve: [\"[a\"]\n",
			`codemode.yaml:4:15: connectors.x.approve[0]: bad glob "[a" (path.Match syntax: *, ?, [a-z], \ escapes)`},
		{"path pattern on a builtin", "connectors:\n  x:\n    builtin: notes\n    approve: [a, \"path:/admin/*\"]\n",
			`codemode.yaml:4:18: connectors.x.approve[1]: "path:/admin/*": path: patterns match HTTP paths, which only the methods of OpenAPI connectors have`},
		{"path pattern on a stdio server", "connectors:\n  x:\n    command: srv\n    no_approve: [\"path:/*\"]\n",
			`codemode.yaml:4:18: connectors.x.no_approve[0]: "path:/*": path: patterns match HTTP paths, which only the methods of OpenAPI connectors have`},
		{"glob list as string", "connectors:\n  x:\n    builtin: notes\n    approve: write_*\n",
			`codemode.yaml:4:14: connectors.x.approve: expected a list of globs such as ["write_*"], got the string "write_*"`},
		{"args as string", "connectors:\n  x:\n    command: npx\n    args: -y srv\n",
			`codemode.yaml:4:11: connectors.x.args: expected a list of strings, got the string "-y srv"`},
		{"list in args", "connectors:\n  x:\n    command: npx\n    args: [a, [b]]\n",
			`codemode.yaml:4:15: connectors.x.args[1]: expected a string, got a list`},
		{"oauth on a command", "connectors:\n  x:\n    command: srv\n    oauth: {client_id: c}\n",
			`codemode.yaml:4:5: connectors.x.oauth: oauth does not apply to a command connector (only to url connectors)`},
		{"oauth unknown key", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {clientId: c}\n",
			`codemode.yaml:4:13: connectors.x.oauth.clientId: unknown key (did you mean "client_id"?)`},
		{"oauth secret without id", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {client_secret: s3cr3t}\n",
			`codemode.yaml:4:12: connectors.x.oauth: client_secret and private_key need the client_id they belong to`},
		{"oauth client credentials without a secret", "connectors:\n  x:\n    url: https://a/mcp\n    oauth:\n      grant: client_credentials\n      client_id: c\n",
			`codemode.yaml:5:7: connectors.x.oauth: grant client_credentials needs client_id and client_secret (or private_key): no person signs in`},
		{"oauth bad grant", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {grant: password}\n",
			`codemode.yaml:4:20: connectors.x.oauth.grant: must be one of authorization_code, client_credentials; got "password"`},
		{"oauth metadata document over http", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {client_metadata_url: \"http://a/c.json\"}\n",
			`codemode.yaml:4:34: connectors.x.oauth.client_metadata_url: a client ID metadata document's URL is https with a path, such as "https://example.com/codemode-mcp.json"; got "http://a/c.json"`},
		{"oauth scope with a space", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {scopes: [\"a b\"]}\n",
			`codemode.yaml:4:22: connectors.x.oauth.scopes[0]: a scope is one word without spaces or quotes; got "a b"`},
		{"oauth missing key file", "connectors:\n  x:\n    url: https://a/mcp\n    oauth: {client_id: c, private_key: /nonexistent/k.pem}\n",
			`codemode.yaml:4:40: connectors.x.oauth.private_key: private key /nonexistent/k.pem: open /nonexistent/k.pem: no such file or directory`},
		{"oauth with an Authorization header", "connectors:\n  x:\n    url: https://a/mcp\n    headers: {Authorization: Bearer x}\n    oauth: {}\n",
			`codemode.yaml:5:5: connectors.x.oauth: oauth and an Authorization header exclude each other: with the header, codemode-mcp sends it as it is and never signs in`},
		{"oauth2 token_url in the clear", "connectors:\n  x:\n    openapi: x.json\n    auth:\n      oauth2: {token_url: \"http://auth.example.com/t?k=v\", client_id: c, client_secret: s}\n",
			`codemode.yaml:5:27: connectors.x.auth.oauth2.token_url: the client secret is sent to it, so it must be https (plain http only to a loopback address), got "http://auth.example.com/t?…"`},
		{"oauth2 without a secret", "connectors:\n  x:\n    openapi: x.json\n    auth:\n      oauth2: {token_url: https://a/t, client_id: c}\n",
			`codemode.yaml:5:15: connectors.x.auth.oauth2: needs token_url, client_id and client_secret (and optionally scopes)`},
		{"bad no_approve glob", "connectors:\n  x:\n    openapi: x.json\n    no_approve: [\"[\"]\n",
			`codemode.yaml:4:18: connectors.x.no_approve[0]: bad glob "[" (path.Match syntax: *, ?, [a-z], \ escapes)`},
		{"auth with two methods", "connectors:\n  x:\n    openapi: a.json\n    auth: {bearer: t, basic: {username: u}}\n",
			`codemode.yaml:4:11: connectors.x.auth: takes exactly one of bearer, basic, api_key or oauth2; got bearer and basic`},
		{"auth api_key incomplete", "connectors:\n  x:\n    openapi: a.json\n    auth:\n      api_key: {name: k}\n",
			`codemode.yaml:5:16: connectors.x.auth.api_key: needs name and value (and in: header, query or cookie; default header)`},
		{"auth api_key in", "connectors:\n  x:\n    openapi: a.json\n    auth:\n      api_key: {in: body, name: k, value: v}\n",
			`codemode.yaml:5:21: connectors.x.auth.api_key.in: must be one of header, query, cookie; got "body"`},
		{"empty revert", "connectors:\n  x:\n    builtin: notes\n    revert: {a: \" \"}\n",
			`codemode.yaml:4:17: connectors.x.revert.a: must be a JavaScript expression such as "(args, result) => …"`},
		{"wildcard origin", "server:\n  allowed_origins: [\"*\"]\n",
			`codemode.yaml:2:21: server.allowed_origins[0]: "*" would let any web page drive the server; list the origins (such as "https://app.example.com") that may`},
		{"origin with path", "server:\n  allowed_origins: [\"https://a.example/app\"]\n",
			`codemode.yaml:2:21: server.allowed_origins[0]: expected an origin such as "https://app.example.com" or "http://localhost:6274" (scheme, host and port only), got "https://a.example/app"`},
		{"bad allowed host", "server:\n  allowed_hosts: [\"http://a\"]\n",
			`codemode.yaml:2:19: server.allowed_hosts[0]: expected a host name such as "mcp.example.com" or "mcp.example.com:8931", got "http://a"`},
		{"tls cert without key", "server:\n  tls_cert: c.pem\n",
			`codemode.yaml:2:13: server: tls_cert and tls_key go together: set both (HTTPS) or neither`},
		{"zero max_body", "server:\n  max_body: 0\n",
			`codemode.yaml:2:13: server.max_body: must be a positive size`},
		{"zero connections", "server:\n  max_connections: 0\n",
			`codemode.yaml:2:20: server.max_connections: must be a positive number, got 0`},
		{"bad approvals tools", "approvals:\n  tools: no way\n",
			`codemode.yaml:2:10: approvals.tools: expected true or false, got "no way"`},
		{"bad approvals console", "approvals:\n  console: web\n",
			`codemode.yaml:2:12: approvals.console: expected true or false, got "web"`},
		{"inherit reserved", "connectors:\n  x:\n    command: a\n    inherit_env: [HOME, CODEMODE_TOKEN]\n",
			`codemode.yaml:4:25: connectors.x.inherit_env[1]: CODEMODE_TOKEN: codemode-mcp's own CODEMODE_* variables are never passed to a downstream server (set a value under env: if one needs it)`},
		{"inherit with a bad item", "connectors:\n  x:\n    command: a\n    inherit_env: [[a], CODEMODE_TOKEN]\n",
			"codemode.yaml:4:19: connectors.x.inherit_env[0]: expected a string, got a list\n" +
				`codemode.yaml:4:24: connectors.x.inherit_env[1]: CODEMODE_TOKEN: codemode-mcp's own CODEMODE_* variables are never passed to a downstream server (set a value under env: if one needs it)`},
		{"inherit on url", "connectors:\n  x:\n    url: https://x/mcp\n    inherit_env: true\n",
			`codemode.yaml:4:5: connectors.x.inherit_env: inherit_env does not apply to a url connector (only to command connectors)`},
		{"inherit as map", "connectors:\n  x:\n    command: a\n    inherit_env: {a: b}\n",
			`codemode.yaml:4:18: connectors.x.inherit_env: expected true, false or a list of variable names such as ["GITHUB_TOKEN"], got a mapping`},
		{"bad env name", "connectors:\n  x:\n    command: a\n    env: {\"A=B\": c}\n",
			`codemode.yaml:4:11: connectors.x.env["A=B"]: bad environment variable name "A=B"`},
		{"top level list", "- a\n",
			`codemode.yaml:1:1: expected a mapping at the top (server, store, sandbox, approvals, connectors), got a list`},
		{"syntax error", "server: [\n",
			`codemode.yaml:1:9: YAML syntax error: sequence end token ']' not found`},
		{"two documents", "server: {}\n---\nstore: {}\n",
			`codemode.yaml:3:1: a configuration file holds one YAML document; found another here`},
		{"undefined alias", "server:\n  name: *nope\n",
			`codemode.yaml:2:9: server.name: alias *nope refers to no anchor defined before it`},
		{"unsupported tag", "server:\n  name: !secret x\n",
			`codemode.yaml:2:9: server.name: unsupported YAML tag !secret`},
		{"connector not a mapping", "connectors:\n  x: notes\n",
			`codemode.yaml:2:6: connectors.x: expected a mapping with one of builtin, command, url or openapi, got the string "notes"`},
		{"quoted odd key path", "connectors:\n  \"a b\":\n    builtin: notes\n",
			`codemode.yaml:2:3: connectors["a b"]: connector name "a b" is not a valid JavaScript identifier (letters, digits, _ and $; not starting with a digit); try "a_b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "codemode.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", cfg)
			}
			if cfg != nil {
				t.Errorf("Parse returned a Config with an error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if e.File != "codemode.yaml" || e.Line == 0 {
				t.Errorf("error lacks file or line: %+v", e)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := "server:\n  transport: htp\n  addr: bad\nsandbox:\n  timeout: x\n"
	_, err := Parse([]byte(src), "c.yaml")
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("got %T %v, want several errors", err, err)
	}
	var got []string
	for _, e := range joined.Unwrap() {
		got = append(got, e.(*Error).Field)
	}
	want := []string{"server.transport", "server.addr", "sandbox.timeout"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if n := strings.Count(err.Error(), "\n"); n != 2 {
		t.Errorf("the error has %d newlines, want 2:\n%s", n, err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Field != "server.transport" {
		t.Errorf("errors.As(*Error) = %+v, want the first problem", e)
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name, src string
		check     func(*Config) any
		want      any
	}{
		{"size MiB", "sandbox: {memory_limit: 512MiB}", func(c *Config) any { return c.Sandbox.MemoryLimit }, int64(512 << 20)},
		{"size MB", "sandbox: {memory_limit: 512MB}", func(c *Config) any { return c.Sandbox.MemoryLimit }, int64(512e6)},
		{"size plain", "sandbox: {memory_limit: 1048576}", func(c *Config) any { return c.Sandbox.MemoryLimit }, int64(1 << 20)},
		{"lease", "store: {lease: 40s}", func(c *Config) any { return c.Store.Lease }, 40 * time.Second},
		{"task timeout", "sandbox: {task_timeout: 2h}", func(c *Config) any { return c.Sandbox.TaskTimeout }, 2 * time.Hour},
		{"task timeout default", "sandbox: {timeout: 5s}", func(c *Config) any { return c.Sandbox.TaskTimeout }, 30 * time.Minute},
		{"run log quota", "store: {max_run_log: 16MiB}", func(c *Config) any { return c.Store.MaxRunLog }, int64(16 << 20)},
		{"hex int", "store: {max_executions: 0x10}", func(c *Config) any { return c.Store.MaxExecutions }, 16},
		{"quoted int", "store: {max_executions: \"7\"}", func(c *Config) any { return c.Store.MaxExecutions }, 7},
		{"transport case", "server: {transport: SSE}", func(c *Config) any { return c.Server.Transport }, "sse"},
		{"number as string", "server: {name: 42}", func(c *Config) any { return c.Server.Name }, "42"},
		{"start timeouts", "server: {start_timeout: 3s}\nconnectors: {s: {command: srv, start_timeout: 90s}, r: {url: \"http://127.0.0.1:1/mcp\"}}",
			func(c *Config) any {
				return []time.Duration{c.Server.StartTimeout, c.Connectors[0].StartTimeout, c.Connectors[1].StartTimeout}
			},
			[]time.Duration{3 * time.Second, 90 * time.Second, 0}},
		{"restart delays", "connectors: {s: {command: srv, restart_delay: 2s, max_restart_delay: 5m}, o: {openapi: o.json, restart_delay: 1s}}",
			func(c *Config) any {
				return []time.Duration{c.Connectors[0].RestartDelay, c.Connectors[0].MaxRestartDelay, c.Connectors[1].RestartDelay, c.Connectors[1].MaxRestartDelay}
			},
			[]time.Duration{2 * time.Second, 5 * time.Minute, time.Second, 0}},
		{"start timeout in a client file", `{"mcpServers": {"s": {"command": "x", "start_timeout": "1m"}}}`,
			func(c *Config) any { return c.Connectors[0].StartTimeout }, time.Minute},
		{"connector timeout zero", "connectors: {n: {builtin: notes, timeout: 0}}", func(c *Config) any { return c.Connectors[0].Timeout }, time.Duration(0)},
		{"tools list shorthand", "connectors: {n: {builtin: notes, tools: [\"a*\"]}}", func(c *Config) any { return c.Connectors[0].Tools }, Filter{Include: []string{"a*"}}},
		{"merge key", "connectors:\n  a: &a {command: npx, args: [one], timeout: 3s}\n  b:\n    <<: *a\n    args: [two]\n",
			func(c *Config) any {
				return []any{c.Connectors[1].Command, c.Connectors[1].Args, c.Connectors[1].Timeout}
			},
			[]any{"npx", []string{"two"}, 3 * time.Second}},
		{"string tag", "server: {name: !!str 12}", func(c *Config) any { return c.Server.Name }, "12"},
		{"block scalar", "connectors:\n  n:\n    builtin: notes\n    description: |\n      two\n      lines\n",
			func(c *Config) any { return c.Connectors[0].Description }, "two\nlines\n"},
		{"order of connectors", "connectors: {b: {builtin: notes}, a: {builtin: notes}}",
			func(c *Config) any { return []string{c.Connectors[0].Name, c.Connectors[1].Name} }, []string{"b", "a"}},
		{"dotted names", "connectors: {mcp.a: {builtin: notes}, mcp.b: {builtin: notes}, github.issues: {builtin: notes}}",
			func(c *Config) any { return []string{c.Connectors[0].Name, c.Connectors[1].Name, c.Connectors[2].Name} }, []string{"mcp.a", "mcp.b", "github.issues"}},
		{"client names stay flat", `{"mcpServers": {"github.issues": {"command": "x"}}}`,
			func(c *Config) any { return []string{c.Connectors[0].Name, c.Connectors[0].SourceName} }, []string{"github_issues", "github.issues"}},
		{"bom", "\ufeffserver: {name: bom}", func(c *Config) any { return c.Server.Name }, "bom"},
		{"typecheck", "sandbox: {typecheck: tsc}", func(c *Config) any { return c.Sandbox.TypeCheck }, "tsc"},
		{"memory limiter", "sandbox: {memory_limiter: sampling}", func(c *Config) any { return c.Sandbox.MemoryLimiter }, "sampling"},
		{"forward unknown", "connectors: {s: {command: srv, forward_unknown: true}, r: {url: \"http://127.0.0.1:1/mcp\", forward_unknown: true}}",
			func(c *Config) any { return []bool{c.Connectors[0].ForwardUnknown, c.Connectors[1].ForwardUnknown} }, []bool{true, true}},
		{"forward unknown in a client file", `{"mcpServers": {"s": {"command": "x", "forward_unknown": true}}}`,
			func(c *Config) any { return c.Connectors[0].ForwardUnknown }, true},
		{"inherit all", "connectors: {s: {command: srv, inherit_env: true}}", func(c *Config) any { return c.Connectors[0].Inherit }, Inherit{All: true}},
		{"inherit none", "connectors: {s: {command: srv, inherit_env: false}}", func(c *Config) any { return c.Connectors[0].Inherit }, Inherit{}},
		{"origin normalized", "server: {allowed_origins: [\"HTTPS://App.Example.com/\"]}", func(c *Config) any { return c.Server.AllowedOrigins }, []string{"https://app.example.com"}},
		{"origin default ports dropped", "server: {allowed_origins: [\"https://a.example:443\", \"http://b.example:80/\", \"https://c.example:80\", \"http://[::1]:80\"]}",
			func(c *Config) any { return c.Server.AllowedOrigins }, []string{"https://a.example", "http://b.example", "https://c.example:80", "http://[::1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "c.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.check(cfg)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRelativePathsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "codemode.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "store: {path: db/x.db}\nconnectors:\n  s: {command: ./srv, cwd: ..}\n  o: {openapi: spec.yaml}\n  h: {openapi: /abs/spec.json}\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Store.Path, cfg.Connectors[0].Command, cfg.Connectors[0].Cwd, cfg.Connectors[1].OpenAPI, cfg.Connectors[2].OpenAPI}
	want := []string{filepath.Join(dir, "sub", "db", "x.db"), "./srv", dir, filepath.Join(dir, "sub", "spec.yaml"), "/abs/spec.json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// store.path is a SQLite file or a PostgreSQL URL: a name SQLite would
// read as an in-memory database or a URI is a file name like any other,
// beside the configuration, since the store opens every path as a file.
func TestStorePathIsAFileOrAPostgresURL(t *testing.T) {
	for _, p := range []string{":memory:", "file:x.db"} {
		cfg, err := Parse([]byte("store: {path: \""+p+"\"}"), "/etc/codemode/codemode.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("/etc/codemode", p); cfg.Store.Path != want {
			t.Errorf("store.path %q = %q, want %q", p, cfg.Store.Path, want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load(missing) = %v, want an error naming %s that is ErrNotExist", err, path)
	}
}

// Load reads at most maxConfigFile bytes: a file beyond it (a log named
// by mistake, /dev/zero) is refused with what was wrong, not read whole.
func TestLoadRefusesAHugeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("# padding\n", maxConfigFile/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := path + " is larger than 4 MiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Load(huge) = %v, want an error containing %q", err, want)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("# padding\n", maxConfigFile/10)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("Load(at the limit) = %v", err)
	}
}

// A config file every user could change (writable by all, or in a
// directory all can write to without the sticky bit, where anyone could
// replace it) is refused, saying what to change: it names the commands
// codemode-mcp runs. A sticky directory (/tmp) protects a user's file.
func TestLoadRefusesAFileOthersCanChange(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no such mode bits")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(path, []byte("connectors:\n  x: {command: echo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, dir os.FileMode
		want      string
	}{
		{0o600, 0o700, ""},
		{0o664, 0o775, ""},
		{0o666, 0o700, path + " is writable by every user (mode 0666), and it names the commands codemode-mcp runs: make it yours alone (chmod o-w " + path + ")"},
		{0o644, 0o777, path + " is in a directory every user can write to (" + dir + ", mode 0777), where anyone could replace it, and it names the commands codemode-mcp runs: move it, or chmod o-w " + dir},
		{0o644, 0o777 | os.ModeSticky, ""},
	} {
		if err := os.Chmod(path, tc.file); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tc.dir); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("file %v in a directory %v: Load = %v, want %q", tc.file, tc.dir, err, tc.want)
		}
	}
}

// A store.path that cannot be the SQLite file (a directory, a path through
// a file) or a PostgreSQL URL that does not parse is refused at its line,
// saying what to write, not when the store is opened (whose message
// named no line).
func TestStorePathErrorsAreLocated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{".", file + ":2:9: store.path: " + dir + " is a directory: name the SQLite file in it, such as " + filepath.Join(dir, "codemode.db")},
		{"f/sub/c.db", file + ":2:9: store.path: " + filepath.Join(dir, "f") + " is a file, not a directory the SQLite file " + filepath.Join(dir, "f/sub/c.db") + " can be in"},
		{"postgres://u:p%zz@h/db", file + ":2:9: store.path: the URL does not parse; write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (its password percent-encoded)"},
		{"new/c.db", ""},
	} {
		_, err := Parse([]byte("store:\n  path: "+tc.path+"\n"), file)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("store.path %s: %v\nwant %s", tc.path, err, tc.want)
		}
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	tests := []struct {
		name, flag, env string
		createDefault   bool
		want            string
	}{
		{"nothing", "", "", false, ""},
		{"default file", "", "", true, "codemode.yaml"},
		{"env wins over default file", "", "/etc/env.yaml", true, "/etc/env.yaml"},
		{"flag wins over env", "flag.yaml", "/etc/env.yaml", true, "flag.yaml"},
		{"flag need not exist", "missing.yaml", "", false, "missing.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvConfig, tt.env)
			os.Remove(DefaultFile)
			if tt.createDefault {
				if err := os.WriteFile(DefaultFile, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Find(tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Find(%q) = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}

func TestServerWarnings(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{"server: {transport: http, addr: \"0.0.0.0:80\"}", 1},
		{"server: {transport: http, addr: \"0.0.0.0:80\", tls_cert: c, tls_key: k}", 1},
		{"server: {transport: http, addr: \":80\"}", 1},
		{"server: {transport: http, addr: \"0.0.0.0:80\", auth_token: t}", 0},
		{"server: {transport: sse, addr: \"localhost:80\"}", 0},
		{"server: {transport: stdio, addr: \"0.0.0.0:80\"}", 0},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte(tt.src), "c.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Warnings) != tt.want {
			t.Errorf("%s: warnings %v, want %d", tt.src, cfg.Warnings, tt.want)
		}
		for _, w := range cfg.Warnings {
			if w.Line != 1 || w.Field != "server.addr" {
				t.Errorf("%s: warning not located at server.addr: %+v", tt.src, w)
			}
		}
	}
}

// A PostgreSQL URL in store.path is kept as written (not a path beside the
// file), with the pool's settings; its password is a secret, the rest of
// it is not.
func TestStorePostgres(t *testing.T) {
	src := "store:\n  path: postgres://codemode:s3cret@db.internal:5432/codemode?sslmode=require&password=other\n  postgres: {max_conns: 8}\n"
	cfg, err := Parse([]byte(src), "/etc/codemode/codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://codemode:s3cret@db.internal:5432/codemode?sslmode=require&password=other"; cfg.Store.Path != want {
		t.Errorf("store.path = %q, want %q", cfg.Store.Path, want)
	}
	if !IsPostgresURL(cfg.Store.Path) || IsPostgresURL("/var/lib/codemode.db") || !IsPostgresURL("PostgreSQL://h/db") {
		t.Error("IsPostgresURL")
	}
	if cfg.Store.Postgres.MaxConns != 8 {
		t.Errorf("max_conns = %d, want 8", cfg.Store.Postgres.MaxConns)
	}
	if diff := cmp.Diff([]string{"s3cret", "other"}, cfg.Secrets()); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	// sslpassword (the passphrase of the client key sslkey names) is one
	// too; sslkey itself is a path.
	got := DatabaseURLSecrets("postgresql://u@h/db?sslkey=/etc/k.pem&sslpassword=key-pass-3e1&sslmode=verify-full")
	if diff := cmp.Diff([]string{"key-pass-3e1"}, got); diff != "" {
		t.Errorf("secrets with sslpassword (-want +got):\n%s", diff)
	}
	if got := DatabaseURLSecrets("/var/lib/codemode.db"); got != nil {
		t.Errorf("secrets of a file path: %v", got)
	}
	_, err = Parse([]byte("store:\n  postgres: {max_conns: 0}\n"), "")
	if err == nil || !strings.Contains(err.Error(), "store.postgres.max_conns") {
		t.Errorf("max_conns 0: %v, want an error naming store.postgres.max_conns", err)
	}
}

// A file nested a million deep, within the size bound, is refused at
// its 65th level before the YAML parser, which takes time quadratic in
// the depth, sees it (it took hours; a config may come from someone else).
func TestParseRefusesDeepNestingEarly(t *testing.T) {
	const n = 1 << 18
	for _, tc := range []struct{ name, src, want string }{
		{"flow sequences", strings.Repeat("[", n) + strings.Repeat("]", n), "x.yaml:1:65: nesting deeper than 64 levels"},
		{"flow mappings", "a: " + strings.Repeat("{b: ", n/4) + strings.Repeat("}", n/4), "x.yaml:1:260: nesting deeper than 64 levels"},
		{"block sequences on a line", "a:\n  " + strings.Repeat("- ", n) + "x\n", "x.yaml:2:131: nesting deeper than 64 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "x.yaml")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %.200v\nwant %s", err, tc.want)
			}
		})
	}
}

// A file of a great many keys or values, within the size bound, is refused
// at the first key or token past the bound before the YAML parser sees it:
// its time grows with the square of one mapping's keys (a 256 KiB mapping
// took 39 s) and with the number of tokens (a 4 MiB sequence took most of a
// minute).
func TestParseRefusesWideFilesEarly(t *testing.T) {
	lines := func(n int, format string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	for _, tc := range []struct{ name, src, want string }{
		{"keys of one mapping", lines(1<<15, "k%d: v\n"), "x.yaml:4097:6: more than 4096 keys: a configuration holds a few hundred; is this the right file?"},
		{"keys of a flow mapping", "{" + lines(1<<15, "k%d: 1, ") + "z: 1}", "x.yaml:1:39857: more than 4096 keys: a configuration holds a few hundred; is this the right file?"},
		{"values of a sequence", "a:\n" + strings.Repeat("- 1\n", 1<<17), "x.yaml:32769:1: more than 65536 YAML tokens (names, values, punctuation): a configuration holds a few thousand; is this the right file?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "x.yaml")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %.200v\nwant %s", err, tc.want)
			}
		})
	}
}
