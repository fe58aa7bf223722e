package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// resourceMetadata is a protected resource's metadata (RFC 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// IssuerMetadata is an authorization server's metadata (RFC 8414, and
// OpenID Connect discovery, which has the same fields), with the MCP
// additions: what the client signs in with, and what a resource server
// needs (the issuer's keys, a JWK Set; its introspection endpoint, RFC
// 7662; and, to sign people in to the approval console, the
// authorization and token endpoints and what they support). Any may be
// empty.
type IssuerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	JWKSURI                                    string   `json:"jwks_uri"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint"`
	// Where is the URL the metadata was read from, for messages (set by
	// Fetcher.Issuer).
	Where string `json:"-"`
}

// discovery is what the client learnt of a server before signing in: the
// resource to name in its requests and the authorization server's
// endpoints.
type discovery struct {
	// resource is the resource indicator sent (RFC 8707): the protected
	// resource metadata's resource, or the server's own URL.
	resource string
	// meta is the authorization server's metadata; its Issuer is ""
	// when it published none (the 2025-03-26 default endpoints).
	meta IssuerMetadata
	// how says how the metadata was found, for messages and logs.
	how string
	// scopesSupported is the protected resource's scopes_supported.
	scopesSupported []string
	// defaults says no metadata was found: meta holds the 2025-03-26
	// default endpoints at the server's origin.
	defaults bool
}

// errResourceMismatch is wrapped by the error of protected resource
// metadata that names another resource than the server.
var errResourceMismatch = errors.New("the protected resource metadata names another resource")

// discover finds the protected resource metadata of the server at server
// (from the challenge's resource_metadata, else the well-known URLs with
// and without the server's path) and the metadata of its first
// authorization server (RFC 8414 and OpenID Connect discovery, with the
// path-insertion variants in the specification's order). Without
// protected resource metadata it falls back as the 2025-03-26 revision
// allows: metadata at the server's origin, else the default endpoints
// /authorize, /token and /register there. Either way the authorization
// server must name a token endpoint.
func (f *Fetcher) discover(ctx context.Context, server string, ch bearer) (*discovery, error) {
	su, err := secureURL(server, "the server URL")
	if err != nil {
		return nil, err
	}
	local := isLoopback(su.Hostname())
	prm, prmURL, err := f.resourceMetadata(ctx, su, ch.resourceMetadata, local)
	if err != nil {
		return nil, err
	}
	var d *discovery
	switch {
	case prm == nil:
		d, err = f.legacyDiscovery(ctx, su, local)
	case prm.Resource == "":
		err = fmt.Errorf("the protected resource metadata at %s has no resource", redacted(prmURL))
	case !resourceMatches(prm.Resource, server):
		err = fmt.Errorf("%w: the metadata at %s is for %q, but the server is %q; refusing to sign in",
			errResourceMismatch, redacted(prmURL), clip(prm.Resource), redacted(server))
	case len(prm.AuthorizationServers) == 0:
		err = fmt.Errorf("the protected resource metadata at %s names no authorization server", redacted(prmURL))
	default:
		var meta IssuerMetadata
		meta, err = f.issuer(ctx, prm.AuthorizationServers[0], local)
		d = &discovery{resource: prm.Resource, meta: meta, scopesSupported: prm.ScopesSupported,
			how: "protected resource metadata at " + redacted(prmURL) + ", authorization server metadata at " + meta.Where}
	}
	switch {
	case err != nil:
		return nil, err
	case d.meta.TokenEndpoint == "":
		return nil, errors.New("the authorization server metadata names no token endpoint")
	}
	return d, nil
}

// resourceMetadata fetches the protected resource metadata: at the
// challenge's URL when it gave one, else at the well-known URL with the
// server's path, else without. It returns nil when none is published.
func (f *Fetcher) resourceMetadata(ctx context.Context, su *url.URL, fromChallenge string, local bool) (*resourceMetadata, string, error) {
	var candidates []string
	if fromChallenge != "" {
		if _, err := namedURL(fromChallenge, "the resource_metadata URL", local); err != nil {
			return nil, "", err
		}
		candidates = append(candidates, fromChallenge)
	}
	origin := su.Scheme + "://" + su.Host
	if p := strings.TrimSuffix(su.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	return firstFound[resourceMetadata](ctx, f, candidates, "protected resource metadata")
}

// firstFound fetches the first of urls that is there (not a 404 or the
// like) as a T: nil when none is.
func firstFound[T any](ctx context.Context, f *Fetcher, urls []string, what string) (*T, string, error) {
	for _, u := range urls {
		var m T
		notFound, err := f.JSON(ctx, u, what, &m)
		switch {
		case notFound:
			continue
		case err != nil:
			return nil, "", err
		}
		return &m, u, nil
	}
	return nil, "", nil
}

// serverMetadataURLs are the places an authorization server's metadata
// may be, in the order the MCP specification (2025-11-25) tries them: for
// an issuer with a path, RFC 8414's and OpenID Connect's with the path
// inserted after the well-known prefix, then OpenID Connect's with it
// appended; for an issuer without one, RFC 8414's then OpenID Connect's.
func serverMetadataURLs(iu *url.URL) []string {
	origin := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// legacyDiscovery is the 2025-03-26 revision's discovery, for servers that
// publish no protected resource metadata: the authorization server is the
// server's origin, its metadata at RFC 8414's well-known URL there, else
// its endpoints at the default paths.
func (f *Fetcher) legacyDiscovery(ctx context.Context, su *url.URL, local bool) (*discovery, error) {
	origin := su.Scheme + "://" + su.Host
	iu, _ := url.Parse(origin)
	d := &discovery{resource: canonicalURL(su.String())}
	meta, metaURL, err := firstFound[IssuerMetadata](ctx, f, serverMetadataURLs(iu), "authorization server metadata")
	if err != nil {
		return nil, err
	}
	if meta == nil {
		d.meta = IssuerMetadata{
			AuthorizationEndpoint: origin + "/authorize",
			TokenEndpoint:         origin + "/token",
			RegistrationEndpoint:  origin + "/register",
		}
		d.defaults = true
		d.how = "no metadata; the default endpoints /authorize, /token and /register at " + origin + " (the 2025-03-26 fallback)"
		return d, nil
	}
	// The 2025-03-26 revision derives the metadata URL from the server's
	// origin, so the issuer it names may have a path of its own (Issuer's
	// check does not apply; its endpoints' does).
	d.meta = *meta
	d.how = "no protected resource metadata; authorization server metadata at " + redacted(metaURL) + " (the 2025-03-26 discovery)"
	return d, meta.checkURLs(local)
}

// checkURLs refuses endpoints of m that are not HTTPS, or plain http to
// loopback named by a server on this machine (local: see namedURL).
func (m *IssuerMetadata) checkURLs(local bool) error {
	for _, e := range [...]struct{ url, what string }{{m.AuthorizationEndpoint, "the authorization endpoint"}, {m.TokenEndpoint, "the token endpoint"},
		{m.RegistrationEndpoint, "the registration endpoint"}, {m.RevocationEndpoint, "the revocation endpoint"},
		{m.JWKSURI, "the jwks_uri"}, {m.IntrospectionEndpoint, "the introspection endpoint"}} {
		if e.url == "" {
			continue
		}
		if _, err := namedURL(e.url, e.what, local); err != nil {
			return err
		}
	}
	return nil
}

// pkceOK reports whether the authorization server supports PKCE with S256.
// A server that published metadata must list it (the MCP specification:
// without code_challenge_methods_supported a client must not proceed);
// one without an issuer (the default endpoints of the 2025-03-26
// fallback, or its metadata at the server's origin without one: discover
// refuses metadata that does not name its issuer) is assumed to.
func (d *discovery) pkceOK() bool { return d.meta.Issuer == "" || d.meta.SupportsS256() }

// canonicalURL is a server's URL in the form resources are compared and
// named: scheme and host in lower case, no default port, no fragment, no
// trailing slash.
func canonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u.String()
}

// resourceMatches reports whether a protected resource metadata's
// resource covers the server: the same scheme, host and port, and a path
// that is the server's path or a parent of it (at a "/" boundary), as a
// resource at an origin covers the MCP endpoint under it.
func resourceMatches(resource, server string) bool {
	r, err1 := url.Parse(canonicalURL(resource))
	s, err2 := url.Parse(canonicalURL(server))
	if err1 != nil || err2 != nil || r.Scheme != s.Scheme || r.Host != s.Host || r.RawQuery != "" && r.RawQuery != s.RawQuery {
		return false
	}
	rp, sp := r.EscapedPath(), s.EscapedPath()
	return rp == "" || rp == sp || strings.HasPrefix(sp, rp+"/")
}
