package config

import (
	"fmt"
	"net/url"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// ServerAuth is server.auth: the server is an OAuth 2.1 resource server
// (the MCP authorization specification) for the team's authorization
// server, Issuer. Every request to the MCP endpoints needs an access token
// that Issuer issued for Audience; clients find Issuer in the protected
// resource metadata the server publishes for Resource.
type ServerAuth struct {
	// Issuer is the authorization server's issuer identifier (https, or
	// http to a loopback address).
	Issuer string `cfg:"issuer,nonempty,check=issuer"`
	// Audience is what a token's aud must name; "" means Resource.
	Audience string `cfg:"audience,nonempty"`
	// Resource is the MCP endpoint's URL as clients reach it, when it
	// differs from the listen address (a proxy, a public name); "" means
	// http(s)://ADDR/mcp of the listener.
	Resource string `cfg:"resource,nonempty,check=resource"`
	// Introspection is the client that introspects tokens that are not
	// JWTs (RFC 7662), and the endpoint when the issuer's metadata names
	// none.
	Introspection Introspection `cfg:"introspection"`
	// ScopesSupported overrides the scopes the protected resource metadata
	// lists (nil: codemode:run, codemode:approve, codemode:admin).
	ScopesSupported []string `cfg:"scopes_supported,check=scope"`
	// Console, when set, makes the approval console sign people in
	// through Issuer (nil: it takes a bearer token with codemode:admin).
	Console *ConsoleSignOn `cfg:"console"`
}

// ConsoleSignOn is server.auth.console: the client the approval console
// signs people in as (OpenID Connect's authorization code flow with
// PKCE), registered at the issuer with the redirect URI
// <public base>/auth/callback.
type ConsoleSignOn struct {
	// ClientID is the client; ClientSecret its secret ("" for a public
	// client).
	ClientID     string `cfg:"client_id,nonempty"`
	ClientSecret string `cfg:"client_secret,nonempty,secret"`
	// RedirectURI is where the issuer sends the browser back; "" means
	// /auth/callback at server.auth.resource's origin (else the
	// listener's).
	RedirectURI string `cfg:"redirect_uri,nonempty,check=redirectURI"`
	// Scopes are asked for (nil: DefaultConsoleScopes); openid is added.
	Scopes []string `cfg:"scopes,check=scope"`
}

// ConsoleCallbackPath is the console's redirect URI's path.
const ConsoleCallbackPath = "/auth/callback"

// DefaultConsoleScopes are what the console asks the issuer for: who the
// person is (openid, profile, email) and the scopes of what it offers
// (seeing one's runs, deciding, rolling back).
var DefaultConsoleScopes = []string{"openid", "profile", "email", "codemode:run", "codemode:approve", "codemode:admin"}

// Introspection is server.auth.introspection.
type Introspection struct {
	Endpoint     string `cfg:"endpoint,nonempty,check=endpoint"`
	ClientID     string `cfg:"client_id,nonempty"`
	ClientSecret string `cfg:"client_secret,nonempty,secret"`
}

// check says server.auth names its issuer.
func (a *ServerAuth) check(d *decoder, n *node, fp fieldPath) {
	if a.Issuer == "" && !hasKey(n, "issuer") {
		d.errAt(n.pos, fp, "needs issuer: the URL of the team's authorization server")
	}
}

// check says server.auth.introspection names a client or an endpoint.
func (in *Introspection) check(d *decoder, n *node, fp fieldPath) {
	switch {
	case in.ClientSecret != "" && in.ClientID == "":
		d.errAt(n.pos, fp, "client_secret needs client_id")
	case in.ClientID == "" && in.Endpoint == "" && !hasKey(n, "endpoint"): // a refused endpoint has its own error
		d.errAt(n.pos, fp, "needs client_id (and client_secret) of a client the issuer lets introspect, or the endpoint of an introspection that needs none")
	}
}

// check says server.auth.console names its client.
func (c *ConsoleSignOn) check(d *decoder, n *node, fp fieldPath) {
	if c.ClientID == "" && !hasKey(n, "client_id") {
		d.errAt(n.pos, fp, "needs client_id: the client registered at the issuer for the console (its redirect URI "+ConsoleCallbackPath+" at the server's public origin)")
	}
}

// checkRedirectURI checks server.auth.console.redirect_uri: the console's
// callback at its public origin.
func checkRedirectURI(v string) error {
	if err := oauth.CheckURL(v, "the redirect URI"); err != nil {
		return err
	}
	if u, _ := url.Parse(v); u.Path != ConsoleCallbackPath || u.RawQuery != "" {
		return fmt.Errorf("the redirect URI %q must be the console's %s at its public origin (https://console.example.com%s)", v, ConsoleCallbackPath, ConsoleCallbackPath)
	}
	return nil
}

// checkResource checks server.auth.resource: an absolute http(s) URL
// without a query or fragment, https unless the host is loopback.
func checkResource(v string) error {
	if err := oauth.CheckURL(v, "the resource"); err != nil {
		return err
	}
	if u, _ := url.Parse(v); u.RawQuery != "" {
		return fmt.Errorf("the resource %q has a query (RFC 8707: a resource is a URL without one)", v)
	}
	return nil
}

// checkServerAuth refuses credentials: per_user without server.auth:
// without an issuer every caller is the one local user, and there would
// be nobody's own credentials to use.
func (d *decoder) checkServerAuth(cfg *Config) {
	if cfg.Server.Auth == nil {
		for _, c := range cfg.Connectors {
			if c.PerUser() { // (credentials is a key of native connectors only)
				fp := fieldPath("connectors").key(c.SourceName).key("credentials")
				d.errAt(d.at[fp], fp, "per_user needs server.auth (an issuer whose people sign in): without it every caller is the one local user; use credentials: shared")
			}
		}
	} else if cfg.Server.Auth.Console != nil && !cfg.Approvals.Console {
		d.warnAt(d.at["server.auth"], "server.auth.console", "approvals.console is false: no console is served, so nobody signs in to one")
	}
}
