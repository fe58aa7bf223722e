package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecrets(t *testing.T) {
	t.Setenv("GH", "ghp_token123")
	src := `
server:
  auth_token: server-token
connectors:
  notes:
    builtin: notes
  files:
    command: srv
    env: {B_KEY: "bee-secret", A_MODE: "x", DEBUG: "true", PORT: "8080", DATA: /var/lib/data, HOME_DATA: "~/data"}
  remote:
    url: "https://user:pa55word@mcp.example.com/mcp?api_key=query-secret&x=1"
    headers: {Authorization: "Bearer header-token", X-Api-Key: plainkey, User-Agent: codemode-mcp, X-GitHub-Api-Version: "2022-11-28", Accept: application/json}
  tokenuser:
    url: "https://tokenonly@mcp.example.com/mcp"
  gh:
    openapi: "https://api.example.com/spec.json?sig=spec-sig"
    base_url: https://api.example.com
    auth: {bearer: "${GH}"}
  basic:
    openapi: spec.json
    auth: {basic: {username: alice, password: wonderland}}
  key:
    openapi: spec.json
    auth: {api_key: {in: query, name: k, value: apikeyvalue}}
  oauth:
    openapi: spec.json
    auth: {oauth2: {token_url: "https://auth.example.com/token?tenant=t-1234", client_id: me, client_secret: oauth-client-secret}}
  signin:
    url: https://tickets.example.com/mcp
    oauth: {client_id: codemode, client_secret: signin-client-secret}
`
	cfg, err := Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"server-token",
		"x", "bee-secret", // env values, by key
		"Bearer header-token", "header-token", "plainkey",
		"pa55word", "query-secret", "1",
		"tokenonly",
		"spec-sig",
		"ghp_token123",
		"wonderland", "YWxpY2U6d29uZGVybGFuZA==",
		"apikeyvalue",
		"oauth-client-secret", "t-1234",
		"signin-client-secret",
		"ghp_token123", // from the environment
	}
	if diff := cmp.Diff(want, cfg.Secrets()); diff != "" {
		t.Errorf("Secrets() (-want +got):\n%s", diff)
	}
}

// A value from the environment is a secret wherever a connector is given
// it (a stdio server's args, a URL's path and query, the variables
// inherit_env names), but not in codemode-mcp's own settings, nor when it
// is a boolean, a number or an absolute path; defaults written in the file
// are not from the environment.
func TestSecretsFromTheEnvironment(t *testing.T) {
	for k, v := range map[string]string{
		"CM_ARG": "arg-secret", "CM_PATH": "path-secret", "CM_QUERY": "q-secret", "CM_HOST": "internal.example",
		"CM_INHERITED": "inherited-secret", "CM_PORT": "8080", "CM_DIR": "/srv/data", "CM_FLAG": "true",
		"CM_NAME": "gateway", "CM_ADDR": "127.0.0.1:9999", "CM_TRANSPORT": "http", "CM_TIMEOUT": "90s",
		"CM_CMD": "node", "CM_GLOB": "write_*", "CM_DESC": "Local files", "CM_SPEC": "spec.json",
	} {
		t.Setenv(k, v)
	}
	src := `
server:
  name: ${CM_NAME}
  transport: ${CM_TRANSPORT}
  addr: ${CM_ADDR}
  allowed_hosts: ["${CM_HOST}"]
sandbox:
  timeout: ${CM_TIMEOUT}
connectors:
  files:
    command: ${CM_CMD}
    args: ["--token=${CM_ARG}", "--port", "${CM_PORT}", "${CM_DIR}", "--verbose=${CM_FLAG}", "${CM_UNSET:-written-default}"]
    inherit_env: [CM_INHERITED, CM_UNSET]
    approve: ["${CM_GLOB}"]
    description: ${CM_DESC}
  remote:
    url: "https://${CM_HOST}/${CM_PATH}/mcp?k=${CM_QUERY}"
  api:
    openapi: ${CM_SPEC}
`
	cfg, err := Parse([]byte(src), "/etc/codemode/codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"q-secret", // the query value, as before
		"arg-secret", "inherited-secret", "internal.example", "path-secret", "q-secret",
	}
	if diff := cmp.Diff(want, cfg.Secrets()); diff != "" {
		t.Errorf("Secrets() (-want +got):\n%s", diff)
	}
}
