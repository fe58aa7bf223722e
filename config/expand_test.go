package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"HOST": "example.com", "EMPTY": "", "PORT": "8080"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	native := &vars{lookup: lookup}
	client := &vars{lookup: lookup, client: true, workspace: "/ws", home: "/home/u"}
	urlEnv := map[string]string{
		"URL": "https://user:p@ss@evil.example/x?y#z", "BASE": "https://api.example.com/v1", "TOKEN": "t0k3n",
		"HOST": "example.com", "PORT": "8080", "PREFIX": "v1/beta", "ENCODED": "p%40ss%2Fw", "PASS": "p@ss/word",
		"SLASHED": "evil.example/", "USERHOST": "token@evil.example", "QUERY": "a?b", "AMP": "a&admin=1",
		"HASH": "x#", "SPACED": "a b", "SCHEME": "https",
	}
	urls := &vars{lookup: func(k string) (string, bool) { v, ok := urlEnv[k]; return v, ok }}
	tests := []struct {
		name string
		v    *vars
		in   string
		want string
		err  string
	}{
		{"no reference", native, "plain", "plain", ""},
		{"variable", native, "https://${HOST}:${PORT}/mcp", "https://example.com:8080/mcp", ""},
		{"env: prefix", native, "${env:HOST}", "example.com", ""},
		{"default when unset", native, "${NOPE:-fallback}", "fallback", ""},
		{"default when empty", native, "${EMPTY:-fallback}", "fallback", ""},
		{"empty default", native, "a${NOPE:-}b", "ab", ""},
		{"empty but set", native, "[${EMPTY}]", "[]", ""},
		{"nested default", native, "${NOPE:-${HOST}}", "example.com", ""},
		{"default with colon", native, "${NOPE:-http://x:1}", "http://x:1", ""},
		{"escaped dollar", native, "$$HOST and $${HOST}", "$HOST and ${HOST}", ""},
		{"lone dollars kept", native, "cost: 5$ or $HOME", "cost: 5$ or $HOME", ""},
		{"trailing dollar", native, "x$", "x$", ""},
		{"value is not re-expanded", &vars{lookup: func(string) (string, bool) { return "${HOST}", true }}, "${X}", "${HOST}", ""},
		{"missing", native, "Bearer ${TOKEN}", "", "environment variable TOKEN is not set (write ${TOKEN:-default} to give a default)"},
		{"nested defaults at the limit", native, strings.Repeat("${NOPE:-", 8) + "x" + strings.Repeat("}", 8), "x", ""},
		{"nested defaults too deep", native, strings.Repeat("${NOPE:-", 9) + "x" + strings.Repeat("}", 9), "", "${VAR:-default} nested more than 8 deep"},
		{"missing inside default", native, "${A:-${B}}", "", "environment variable B is not set (write ${B:-default} to give a default)"},
		{"unterminated", native, "${HOST", "", `unterminated ${ at "${HOST" (write $$ for a literal dollar)`},
		// Only the part at fault is quoted, clipped: the rest of a header
		// may be a secret written into the file.
		{"unterminated after a secret", native, "Bearer sk-live-0123456789 ${TOKEN and more text after it", "",
			`unterminated ${ at "${TOKEN and more…" (write $$ for a literal dollar)`},
		{"bad name", native, "${a-b}", "", `bad variable name "a-b" in ${…} (letters, digits and _; write $$ for a literal dollar)`},
		{"bad name beside a secret", native, "sk-live-0123456789${a b:-sk-live-0123456789}", "",
			`bad variable name "a b" in ${…} (letters, digits and _; write $$ for a literal dollar)`},
		{"long bad name", native, "${sk-live-0123456789abcdef}", "",
			`bad variable name "sk-live-01234567…" in ${…} (letters, digits and _; write $$ for a literal dollar)`},
		{"empty name", native, "${}", "", `bad variable name "" in ${…} (letters, digits and _; write $$ for a literal dollar)`},
		{"workspaceFolder only in client entries", native, "${workspaceFolder}", "", "environment variable workspaceFolder is not set (write ${workspaceFolder:-default} to give a default)"},
		{"workspaceFolder", client, "${workspaceFolder}/x", "/ws/x", ""},
		{"userHome", client, "${userHome}/.cfg", "/home/u/.cfg", ""},
		{"client env", client, "${env:PORT}", "8080", ""},
		{"input", client, "${input:gh.token}", "", "${input:gh.token} asks VS Code to prompt for a value, which codemode-mcp cannot do; use an environment variable instead, e.g. ${env:GH_TOKEN}"},

		// In a URL the file writes (it starts with scheme://), a value
		// from the environment is put as written, but it must not end the
		// part it stands in: the server a URL names, and where a secret
		// goes in it, are the file's.
		{"whole URL from a variable", urls, "${URL}", "https://user:p@ss@evil.example/x?y#z", ""},
		{"base URL from a variable", urls, "${BASE}/mcp?token=${TOKEN}", "https://api.example.com/v1/mcp?token=t0k3n", ""},
		{"host and port", urls, "https://${HOST}:${PORT}/mcp", "https://example.com:8080/mcp", ""},
		{"path with slashes", urls, "https://example.com/${PREFIX}/mcp", "https://example.com/v1/beta/mcp", ""},
		{"percent-encoded password", urls, "postgres://app:${ENCODED}@db/codemode", "postgres://app:p%40ss%2Fw@db/codemode", ""},
		{"password that names the host", urls, "postgres://app:${PASS}@db.internal/codemode", "",
			`the value of ${PASS} holds "@", which would end the user information or host of this URL and change what it names; percent-encode it in the variable (%40)`},
		{"password that ends the host", urls, "https://app:${SLASHED}@api.example.com/mcp", "",
			`the value of ${SLASHED} holds "/", which would end the user information or host of this URL and change what it names; percent-encode it in the variable (%2F)`},
		{"host with a user", urls, "https://${USERHOST}/mcp", "",
			`the value of ${USERHOST} holds "@", which would end the user information or host of this URL and change what it names; percent-encode it in the variable (%40)`},
		{"client id that ends the path", urls, "https://example.com/clients/${QUERY}/token", "",
			`the value of ${QUERY} holds "?", which would end the path of this URL and change what it names; percent-encode it in the variable (%3F)`},
		{"token that adds a parameter", urls, "https://example.com/mcp?token=${AMP}", "",
			`the value of ${AMP} holds "&", which would end the query of this URL and change what it names; percent-encode it in the variable (%26)`},
		{"token that cuts the query", urls, "https://example.com/mcp?token=${HASH}&v=1", "",
			`the value of ${HASH} holds "#", which would end the query of this URL and change what it names; percent-encode it in the variable (%23)`},
		{"space in a query", urls, "https://example.com/mcp?q=${SPACED}", "",
			`the value of ${SPACED} holds " ", which would end the query of this URL and change what it names; percent-encode it in the variable (%20)`},
		{"default from the file is the file's", urls, "https://example.com/mcp?q=${NOPE:-a&b}", "https://example.com/mcp?q=a&b", ""},
		{"nested default from the environment", urls, "https://example.com/mcp?q=${NOPE:-${AMP}}", "",
			`the value of ${NOPE} holds "&", which would end the query of this URL and change what it names; percent-encode it in the variable (%26)`},
		{"not a URL", urls, "Bearer ${AMP} ${PASS}", "Bearer a&admin=1 p@ss/word", ""},
		{"scheme from a variable", urls, "${SCHEME}://example.com/${QUERY}", "https://example.com/a?b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := tt.v.expand(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("expand(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// expand reports the values it took from the environment, and only those:
// not defaults written in the file, nor VS Code's own variables.
func TestExpandReportsValuesFromTheEnvironment(t *testing.T) {
	env := map[string]string{"HOST": "example.com", "EMPTY": "", "TOKEN": "t0ken"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	native := &vars{lookup: lookup}
	client := &vars{lookup: lookup, client: true, workspace: "/ws", home: "/home/u"}
	tests := []struct {
		v    *vars
		in   string
		want []string
	}{
		{native, "plain", nil},
		{native, "https://${HOST}/${TOKEN}/mcp", []string{"example.com", "t0ken"}},
		{native, "${NOPE:-default}", nil},
		{native, "${EMPTY:-default}", nil},
		{native, "[${EMPTY}]", []string{""}},
		{native, "${NOPE:-${TOKEN}}", []string{"t0ken"}},
		{native, "$${TOKEN}", nil},
		{client, "${workspaceFolder}/${env:TOKEN}", []string{"t0ken"}},
		{client, "${userHome}", nil},
	}
	for _, tt := range tests {
		_, got, err := tt.v.expand(tt.in)
		if err != nil {
			t.Fatalf("expand(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("expand(%q) values from the environment (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestExpandInConfig(t *testing.T) {
	t.Setenv("CM_TIMEOUT", "90s")
	t.Setenv("CM_MAX", "12")
	t.Setenv("CM_ELICIT", "false")
	t.Setenv("CM_MEM", "1GiB")
	t.Setenv("CM_ARG", "--verbose")
	t.Setenv("CM_KEY", "ignored")
	src := `
sandbox:
  timeout: ${CM_TIMEOUT}
  memory_limit: ${CM_MEM}
store:
  max_executions: ${CM_MAX}
approvals:
  elicitation: ${CM_ELICIT}
connectors:
  srv:
    command: ${CM_CMD:-npx}
    args: ["${CM_ARG}", "$$literal"]
    env: {"${CM_KEY}": "${CM_ARG}"}
    revert:
      do: "(args) => srv.undo({ id: ` + "`${args.id}`" + ` })"
`
	cfg, err := Parse([]byte(src), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.Sandbox.Timeout, cfg.Sandbox.MemoryLimit, cfg.Store.MaxExecutions, cfg.Approvals.Elicitation,
		cfg.Connectors[0].Command, cfg.Connectors[0].Args, cfg.Connectors[0].Env, cfg.Connectors[0].Revert}
	want := []any{90 * time.Second, int64(1 << 30), 12, false,
		"npx", []string{"--verbose", "$literal"}, map[string]string{"${CM_KEY}": "--verbose"},
		map[string]string{"do": "(args) => srv.undo({ id: `${args.id}` })"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestExpandErrorNamesVariableFieldAndLine(t *testing.T) {
	src := "connectors:\n  remote:\n    url: https://example.com/mcp\n    headers:\n      Authorization: \"Bearer ${CM_UNSET_TOKEN}\"\n"
	_, err := Parse([]byte(src), "codemode.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want *Error", err)
	}
	want := &Error{
		File: "codemode.yaml", Line: 5, Column: 22, Field: "connectors.remote.headers.Authorization",
		Msg: "environment variable CM_UNSET_TOKEN is not set (write ${CM_UNSET_TOKEN:-default} to give a default)",
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
