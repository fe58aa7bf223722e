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
	}
	if diff := cmp.Diff(want, cfg.Secrets()); diff != "" {
		t.Errorf("Secrets() (-want +got):\n%s", diff)
	}
}
