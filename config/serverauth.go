package config

import (
	"fmt"
	"net/url"
	"strings"

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
	Issuer string
	// Resource is the MCP endpoint's URL as clients reach it, when it
	// differs from the listen address (a proxy, a public name); "" means
	// http(s)://ADDR/mcp of the listener.
	Resource string
	// Audience is what a token's aud must name; "" means Resource.
	Audience string
	// Introspection is the client that introspects tokens that are not
	// JWTs (RFC 7662), and the endpoint when the issuer's metadata names
	// none.
	Introspection Introspection
	// ScopesSupported overrides the scopes the protected resource metadata
	// lists (nil: codemode:run, codemode:approve, codemode:admin).
	ScopesSupported []string
	// Console, when set, makes the approval console sign people in
	// through Issuer (nil: it takes a bearer token with codemode:admin).
	Console *ConsoleSignOn
}

// ConsoleSignOn is server.auth.console: the client the approval console
// signs people in as (OpenID Connect's authorization code flow with
// PKCE), registered at the issuer with the redirect URI
// <public base>/auth/callback.
type ConsoleSignOn struct {
	// ClientID is the client; ClientSecret its secret ("" for a public
	// client).
	ClientID, ClientSecret string
	// RedirectURI is where the issuer sends the browser back; "" means
	// /auth/callback at server.auth.resource's origin (else the
	// listener's).
	RedirectURI string
	// Scopes are asked for (nil: DefaultConsoleScopes); openid is added.
	Scopes []string
}

// ConsoleCallbackPath is the console's redirect URI's path.
const ConsoleCallbackPath = "/auth/callback"

// DefaultConsoleScopes are what the console asks the issuer for: who the
// person is (openid, profile, email) and the scopes of what it offers
// (seeing one's runs, deciding, rolling back).
var DefaultConsoleScopes = []string{"openid", "profile", "email", "codemode:run", "codemode:approve", "codemode:admin"}

// Introspection is server.auth.introspection.
type Introspection struct {
	Endpoint               string
	ClientID, ClientSecret string
}

// serverAuth decodes server.auth.
func (d *decoder) serverAuth(n *node, fp fieldPath) *ServerAuth {
	if !d.mapping(n, fp, "{issuer, audience, resource, introspection, scopes_supported, console}") {
		return nil
	}
	a := &ServerAuth{}
	d.object(n, fp, []field{
		{"issuer", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				if err := oauth.CheckIssuer(v); err != nil {
					d.errAt(n.pos, fp, err.Error())
					return
				}
				a.Issuer = v
			}
		}},
		{"resource", func(n *node, fp fieldPath) { a.Resource = d.resourceURL(n, fp) }},
		{"audience", func(n *node, fp fieldPath) {
			if v, ok := d.nonEmptySetting(n, fp); ok {
				a.Audience = v
			}
		}},
		{"introspection", func(n *node, fp fieldPath) {
			if !d.mapping(n, fp, "{endpoint, client_id, client_secret}") {
				return
			}
			in := &a.Introspection
			d.object(n, fp, []field{
				{"endpoint", func(n *node, fp fieldPath) {
					if v, ok := d.nonEmptySetting(n, fp); ok {
						if err := oauth.CheckURL(v, "the introspection endpoint"); err != nil {
							d.errAt(n.pos, fp, err.Error())
							return
						}
						in.Endpoint = v
					}
				}},
				{"client_id", func(n *node, fp fieldPath) { in.ClientID, _ = d.nonEmptySetting(n, fp) }},
				{"client_secret", func(n *node, fp fieldPath) { in.ClientSecret, _ = d.nonEmpty(n, fp) }},
			})
			switch {
			case in.ClientSecret != "" && in.ClientID == "":
				d.errAt(n.pos, fp, "client_secret needs client_id")
			case in.ClientID == "" && in.Endpoint == "":
				d.errAt(n.pos, fp, "needs client_id (and client_secret) of a client the issuer lets introspect, or the endpoint of an introspection that needs none")
			}
		}},
		{"scopes_supported", func(n *node, fp fieldPath) { a.ScopesSupported = d.scopes(n, fp) }},
		{"console", func(n *node, fp fieldPath) { a.Console = d.consoleSignOn(n, fp) }},
	})
	if a.Issuer == "" && !hasKey(n, "issuer") {
		d.errAt(n.pos, fp, "needs issuer: the URL of the team's authorization server")
	}
	d.authPos = n.pos
	return a
}

// scopes decodes a list of OAuth scopes (no spaces or quotes).
func (d *decoder) scopes(n *node, fp fieldPath) []string {
	var out []string
	for i, s := range d.settingList(n, fp) {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			d.errAt(n.items[i].pos, fp.index(i), fmt.Sprintf("expected a scope (no spaces or quotes), got %q", s))
			continue
		}
		out = append(out, s)
	}
	return out
}

// consoleSignOn decodes server.auth.console.
func (d *decoder) consoleSignOn(n *node, fp fieldPath) *ConsoleSignOn {
	if !d.mapping(n, fp, "{client_id, client_secret, redirect_uri, scopes}") {
		return nil
	}
	c := &ConsoleSignOn{}
	d.object(n, fp, []field{
		{"client_id", func(n *node, fp fieldPath) { c.ClientID, _ = d.nonEmptySetting(n, fp) }},
		{"client_secret", func(n *node, fp fieldPath) { c.ClientSecret, _ = d.nonEmpty(n, fp) }},
		{"redirect_uri", func(n *node, fp fieldPath) {
			v, ok := d.nonEmptySetting(n, fp)
			if !ok {
				return
			}
			if err := oauth.CheckURL(v, "the redirect URI"); err != nil {
				d.errAt(n.pos, fp, err.Error())
				return
			}
			if u, _ := url.Parse(v); u.Path != ConsoleCallbackPath || u.RawQuery != "" {
				d.errAt(n.pos, fp, fmt.Sprintf("the redirect URI %q must be the console's %s at its public origin (https://console.example.com%s)", v, ConsoleCallbackPath, ConsoleCallbackPath))
				return
			}
			c.RedirectURI = v
		}},
		{"scopes", func(n *node, fp fieldPath) { c.Scopes = d.scopes(n, fp) }},
	})
	if c.ClientID == "" && !hasKey(n, "client_id") {
		d.errAt(n.pos, fp, "needs client_id: the client registered at the issuer for the console (its redirect URI "+ConsoleCallbackPath+" at the server's public origin)")
	}
	return c
}

// resourceURL decodes server.auth.resource: an absolute http(s) URL
// without a query or fragment, https unless the host is loopback.
func (d *decoder) resourceURL(n *node, fp fieldPath) string {
	v, ok := d.nonEmptySetting(n, fp)
	if !ok {
		return ""
	}
	if err := oauth.CheckURL(v, "the resource"); err != nil {
		d.errAt(n.pos, fp, err.Error())
		return ""
	}
	if u, _ := url.Parse(v); u.RawQuery != "" {
		d.errAt(n.pos, fp, fmt.Sprintf("the resource %q has a query (RFC 8707: a resource is a URL without one)", v))
		return ""
	}
	return v
}

// checkServerAuth decides between the two kinds of authentication.
// server.auth_token with server.auth is an error: a shared token is a
// principal with no person behind it, which would walk past everything
// that binds runs and decisions to people. CODEMODE_TOKEN in the
// environment is only ignored (with a warning): it is often set for
// other servers, and ignoring it grants nothing.
//
// A connector with credentials: per_user needs server.auth: without an
// issuer every caller is the one local user, and there would be nobody's
// own credentials to use.
func (d *decoder) checkServerAuth(cfg *Config) {
	s := &cfg.Server
	if s.Auth == nil {
		for _, p := range d.perUser {
			d.errAt(p.at, p.fp, "per_user needs server.auth (an issuer whose people sign in): without it every caller is the one local user; use credentials: shared")
		}
		return
	}
	switch {
	case s.AuthTokenFrom == EnvToken:
		d.warnAt(d.authPos, "server.auth", EnvToken+" is set and is not used: with server.auth every client signs in through the issuer")
		s.AuthToken, s.AuthTokenFrom = "", ""
	case s.AuthToken != "":
		d.errAt(d.tokenPos, "server.auth_token", "server.auth_token and server.auth do not go together: with server.auth.issuer every client signs in through the issuer, and a shared token would be nobody in particular; remove one")
	}
	if s.Auth.Console != nil && !cfg.Approvals.Console {
		d.warnAt(d.authPos, "server.auth.console", "approvals.console is false: no console is served, so nobody signs in to one")
	}
}
