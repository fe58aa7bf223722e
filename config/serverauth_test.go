package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// server.auth is read whole: the issuer, resource, audience, the
// introspection client (whose secret is a secret) and scopes_supported;
// with it, a listener beyond loopback needs no auth_token.
func TestServerAuth(t *testing.T) {
	t.Setenv(EnvToken, "")
	src := `server:
  transport: http
  addr: 0.0.0.0:8931
  auth:
    issuer: https://auth.example.com/
    resource: https://mcp.example.com/mcp
    audience: codemode
    introspection:
      client_id: codemode-rs
      client_secret: rs-secret-3f1a
    scopes_supported: [codemode:run, codemode:approve]
`
	cfg, err := Parse([]byte(src), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &ServerAuth{Issuer: "https://auth.example.com/", Resource: "https://mcp.example.com/mcp", Audience: "codemode",
		Introspection:   Introspection{ClientID: "codemode-rs", ClientSecret: "rs-secret-3f1a"},
		ScopesSupported: []string{"codemode:run", "codemode:approve"}}
	if diff := cmp.Diff(want, cfg.Server.Auth); diff != "" {
		t.Errorf("server.auth (-want +got):\n%s", diff)
	}
	if !slices.Contains(cfg.Secrets(), "rs-secret-3f1a") {
		t.Errorf("Secrets() %q lacks the introspection client's secret", cfg.Secrets())
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v; want none (the issuer authenticates)", cfg.Warnings)
	}
}

// Problems with server.auth are reported at their line and field.
func TestServerAuthErrors(t *testing.T) {
	t.Setenv(EnvToken, "")
	for _, tc := range []struct{ src, want string }{
		{"server:\n  auth:\n    audience: x\n", "codemode.yaml:3:5: server.auth: needs issuer: the URL of the team's authorization server"},
		{"server:\n  auth:\n    issuer: http://auth.example.com/\n", `codemode.yaml:3:13: server.auth.issuer: the issuer "http://auth.example.com/" is not HTTPS (plain http is accepted only for a loopback address)`},
		{"server:\n  auth:\n    issuer: https://auth.example.com/?tenant=1\n", `codemode.yaml:3:13: server.auth.issuer: the issuer "https://auth.example.com/?tenant=1" has a query`},
		{"server:\n  auth:\n    issuer: https://a.example/\n    resource: mcp.example.com\n", `codemode.yaml:4:15: server.auth.resource: the resource "mcp.example.com" is not an absolute URL`},
		{"server:\n  auth:\n    issuer: https://a.example/\n    introspection: {client_secret: s3cret-9}\n", "codemode.yaml:4:20: server.auth.introspection: client_secret needs client_id"},
		{"server:\n  auth:\n    issuer: https://a.example/\n    introspection: {}\n", "codemode.yaml:4:20: server.auth.introspection: needs client_id (and client_secret) of a client the issuer lets introspect, or the endpoint of an introspection that needs none"},
		{"server:\n  auth:\n    issuer: https://a.example/\n    scopes_supported: [\"a b\"]\n", `codemode.yaml:4:24: server.auth.scopes_supported[0]: expected a scope (no spaces or quotes), got "a b"`},
		{"server:\n  auth:\n    isuer: https://a.example/\n", `codemode.yaml:3:5: server.auth.isuer: unknown key (did you mean "issuer"?)`},
		{"server:\n  auth_token: t0ken-4e\n  auth:\n    issuer: https://a.example/\n", "codemode.yaml:2:15: server.auth_token: server.auth_token and server.auth do not go together: with server.auth.issuer every client signs in through the issuer, and a shared token would be nobody in particular; remove one"},
	} {
		_, err := Parse([]byte(tc.src), "codemode.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret-9") {
			t.Errorf("%q: the error shows the secret: %v", tc.src, err)
		}
	}
}

// A refused introspection endpoint is one error, not also "needs ... or
// the endpoint" above it, which sent the reader looking for a key that is
// there.
func TestServerAuthRefusedEndpointIsOneError(t *testing.T) {
	t.Setenv(EnvToken, "")
	_, err := Parse([]byte("server:\n  auth:\n    issuer: https://a.example/\n    introspection:\n      endpoint: http://admin.internal/introspect\n"), "codemode.yaml")
	want := `codemode.yaml:5:17: server.auth.introspection.endpoint: the introspection endpoint "http://admin.internal/introspect" is not HTTPS (plain http is accepted only for a loopback address)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// CODEMODE_TOKEN with server.auth is not used (a warning says so): it
// is set for other servers often, and ignoring it grants nothing.
func TestServerAuthIgnoresTheTokenFromTheEnvironment(t *testing.T) {
	t.Setenv(EnvToken, "env-token-8a")
	cfg, err := Parse([]byte("server:\n  auth:\n    issuer: https://a.example/\n"), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.AuthToken != "" || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), "codemode.yaml:3:5: server.auth: CODEMODE_TOKEN is set and is not used") {
		t.Errorf("token %q, warnings %v; want no token and one warning at server.auth", cfg.Server.AuthToken, cfg.Warnings)
	}
}

// credentials: per_user is read for a url connector under server.auth,
// and refused, at its line, where no person could sign in for
// themselves.
func TestPerUserCredentials(t *testing.T) {
	t.Setenv(EnvToken, "")
	const auth = "server:\n  auth:\n    issuer: https://a.example/\n"
	cfg, err := Parse([]byte(auth+"connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: per_user\n  lin:\n    url: https://lin.example/mcp\n    credentials: shared\n"), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if gh, lin := cfg.Connectors[0], cfg.Connectors[1]; !gh.PerUser() || lin.PerUser() || lin.Credentials != CredentialsShared {
		t.Errorf("credentials %q and %q; want per_user and shared", gh.Credentials, lin.Credentials)
	}
	cfg, err = Parse([]byte(auth+"connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials:\n      per_user: token_exchange\n      token_endpoint: https://as.example/oauth2/token\n      client_id: codemode\n      client_secret: xch-s3cret-77\n      audience: https://api.gh.example\n      scopes: [repo, read]\n"), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &TokenExchange{TokenEndpoint: "https://as.example/oauth2/token", ClientID: "codemode", ClientSecret: "xch-s3cret-77", Audience: "https://api.gh.example", Scopes: []string{"repo", "read"}}
	if gh := cfg.Connectors[0]; !gh.PerUser() || !cmp.Equal(gh.TokenExchange, want) {
		t.Errorf("token exchange %+v (per user %v), want %+v", gh.TokenExchange, gh.PerUser(), want)
	}
	if !slices.Contains(cfg.Secrets(), "xch-s3cret-77") {
		t.Error("the token exchange client's secret is not a secret")
	}
	for _, tc := range []struct{ src, want string }{
		{"connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: per_user\n",
			"codemode.yaml:4:18: connectors.gh.credentials: per_user needs server.auth (an issuer whose people sign in)"},
		{auth + "connectors:\n  gh:\n    command: gh-mcp\n    credentials: per_user\n",
			"codemode.yaml:7:5: connectors.gh.credentials: credentials does not apply to a command connector (only to url connectors)"},
		{auth + "connectors:\n  gh:\n    openapi: https://gh.example/openapi.json\n    credentials: per_user\n",
			"codemode.yaml:7:5: connectors.gh.credentials: credentials does not apply to an openapi connector (only to url connectors)"},
		{auth + "connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: per_user\n    oauth: {grant: client_credentials, client_id: c, client_secret: s}\n",
			"codemode.yaml:7:5: connectors.gh.credentials: per_user needs a person to sign in, and oauth.grant: client_credentials has none"},
		{auth + "connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: per_user\n    headers: {Authorization: Bearer x}\n",
			"codemode.yaml:7:5: connectors.gh.credentials: per_user and an Authorization header exclude each other"},
		{auth + "connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: mine\n",
			`codemode.yaml:7:18: connectors.gh.credentials:`},
		{auth + "connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: {per_user: token_exchange, client_id: c}\n",
			"codemode.yaml:7:18: connectors.gh.credentials: token exchange needs token_endpoint"},
		{auth + "connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: {per_user: token_exchange, token_endpoint: https://as.example/token, client_id: c}\n    oauth: {client_id: d}\n",
			"codemode.yaml:7:5: connectors.gh.credentials: token_exchange and oauth exclude each other"},
		{"connectors:\n  gh:\n    url: https://gh.example/mcp\n    credentials: {per_user: token_exchange, token_endpoint: https://as.example/token, client_id: c}\n",
			"codemode.yaml:4:18: connectors.gh.credentials: per_user needs server.auth"},
	} {
		_, err := Parse([]byte(tc.src), "codemode.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// server.auth.console is the client the console signs people in as: its
// secret is a secret; a redirect URI elsewhere than the console's
// callback, or a console without client_id, is an error naming the key.
func TestServerAuthConsole(t *testing.T) {
	t.Setenv(EnvToken, "")
	src := `server:
  auth:
    issuer: https://auth.example.com/
    console:
      client_id: codemode-console
      client_secret: console-secret-7c2e
      redirect_uri: https://mcp.example.com/auth/callback
      scopes: [openid, codemode:run]
`
	cfg, err := Parse([]byte(src), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &ConsoleSignOn{ClientID: "codemode-console", ClientSecret: "console-secret-7c2e",
		RedirectURI: "https://mcp.example.com/auth/callback", Scopes: []string{"openid", "codemode:run"}}
	if diff := cmp.Diff(want, cfg.Server.Auth.Console); diff != "" {
		t.Errorf("server.auth.console (-want +got):\n%s", diff)
	}
	if !slices.Contains(cfg.Secrets(), "console-secret-7c2e") {
		t.Errorf("Secrets() %q lacks the console client's secret", cfg.Secrets())
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v; want none", cfg.Warnings)
	}
	off, err := Parse([]byte(src+"approvals:\n  console: false\n"), "codemode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Warnings) != 1 || !strings.Contains(off.Warnings[0].String(), "server.auth.console: approvals.console is false: no console is served") {
		t.Errorf("with approvals.console false: warnings %v; want one saying nobody signs in", off.Warnings)
	}
	for _, tc := range []struct{ src, want string }{
		{"server:\n  auth:\n    issuer: https://a.example/\n    console: {client_secret: s3cret-9}\n", "codemode.yaml:4:14: server.auth.console: needs client_id"},
		{"server:\n  auth:\n    issuer: https://a.example/\n    console: {client_id: c, redirect_uri: https://m.example/callback}\n", `codemode.yaml:4:43: server.auth.console.redirect_uri: the redirect URI "https://m.example/callback" must be the console's /auth/callback`},
		{"server:\n  auth:\n    issuer: https://a.example/\n    console: {client_id: c, redirect_uri: http://m.example/auth/callback}\n", `server.auth.console.redirect_uri: the redirect URI "http://m.example/auth/callback" is not HTTPS`},
		{"server:\n  auth:\n    issuer: https://a.example/\n    console: {client_id: c, scope: [x]}\n", `server.auth.console.scope: unknown key (did you mean "scopes"?)`},
	} {
		_, err := Parse([]byte(tc.src), "codemode.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to say %q", tc.src, err, tc.want)
		}
	}
}

// A scope is RFC 6749's scope-token, wherever the file gives scopes: one
// with a tab, a line break or another control character is refused,
// naming its field, as one with a space is (scopes_supported and the
// console's scopes took a tab, and every scope list a line break, and
// sent them on).
func TestScopeWithAControlCharacter(t *testing.T) {
	t.Setenv(EnvToken, "")
	auth := "server:\n  auth:\n    issuer: https://a.example/\n"
	for _, tc := range []struct{ src, field string }{
		{auth + "    scopes_supported: [\"a\\tb\"]\n", "server.auth.scopes_supported[0]"},
		{auth + "    console: {client_id: c, scopes: [\"a\\nb\"]}\n", "server.auth.console.scopes[0]"},
		{"connectors:\n  x:\n    url: https://a/mcp\n    oauth: {scopes: [\"a\\nb\"]}\n", "connectors.x.oauth.scopes[0]"},
		{auth + "connectors:\n  x:\n    url: https://a/mcp\n    credentials: {per_user: token_exchange, token_endpoint: https://as.example/token, client_id: c, scopes: [\"a\\u0001b\", \"c\\u007fd\"]}\n", "connectors.x.credentials.scopes[1]"},
	} {
		_, err := Parse([]byte(tc.src), "codemode.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.field+": ") {
			t.Errorf("%q: got %v, want an error at %s", tc.src, err, tc.field)
		}
	}
}
