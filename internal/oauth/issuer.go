package oauth

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// CheckURL reports whether raw is an absolute https URL (http only to a
// loopback address) without a fragment, as every URL a token or a
// secret travels to must be; what names it in the error.
func CheckURL(raw, what string) error {
	_, err := secureURL(raw, what)
	return err
}

// CheckIssuer reports whether issuer can be an authorization server's
// identifier: an absolute https URL (http only to a loopback address)
// without a query or fragment.
func CheckIssuer(issuer string) error {
	_, err := checkIssuer(issuer, true)
	return err
}

// checkIssuer checks issuer as CheckIssuer does and, when a server that
// is not on this machine named it (local false), as namedURL does.
func checkIssuer(issuer string, local bool) (*url.URL, error) {
	u, err := namedURL(issuer, "the issuer", local)
	if err == nil && u.RawQuery != "" {
		err = fmt.Errorf("the issuer %q has a query", clip(issuer))
	}
	return u, err
}

// Issuer fetches the metadata of the authorization server issuer (an
// issuer a protected resource names, or the team's), at the places the
// MCP specification tries (serverMetadataURLs), and checks that it names
// issuer itself and that its endpoints are HTTPS, or plain http to
// loopback when the issuer is itself on this machine.
func (f *Fetcher) Issuer(ctx context.Context, issuer string) (IssuerMetadata, error) {
	iu, err := url.Parse(issuer) // (f.issuer checks it all)
	return f.issuer(ctx, issuer, err == nil && isLoopback(iu.Hostname()))
}

// issuer is Issuer for an issuer that a server named: plain http, for the
// issuer and its endpoints, only when that server is on this machine
// (local: see namedURL).
func (f *Fetcher) issuer(ctx context.Context, issuer string, local bool) (IssuerMetadata, error) {
	iu, err := checkIssuer(issuer, local)
	if err != nil {
		return IssuerMetadata{}, err
	}
	meta, where, err := firstFound[IssuerMetadata](ctx, f, serverMetadataURLs(iu), "authorization server metadata")
	switch {
	case err != nil:
		return IssuerMetadata{}, err
	case meta == nil:
		return IssuerMetadata{}, fmt.Errorf("the authorization server %s publishes no metadata (tried %s)",
			redacted(issuer), strings.Join(serverMetadataURLs(iu), ", "))
	case strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
		return IssuerMetadata{}, fmt.Errorf("the authorization server metadata at %s names issuer %q, not %q; refusing it",
			redacted(where), clip(meta.Issuer), redacted(issuer))
	}
	meta.Where = redacted(where)
	if err := meta.checkURLs(local); err != nil {
		return IssuerMetadata{}, fmt.Errorf("the authorization server metadata at %s: %w", meta.Where, err)
	}
	return *meta, nil
}

// Introspect asks endpoint (which Issuer or CheckURL checked) about token
// (RFC 7662), authenticated as the client id with secret
// (client_secret_basic; no authentication when id is ""), and returns the
// answer's status and bounded body. The token is sent in the form only;
// errors never hold it.
func (f *Fetcher) Introspect(ctx context.Context, endpoint, token, id, secret string) (int, []byte, error) {
	auth := clientAuth{id: id, secret: secret, method: authBasic}
	if id == "" {
		auth.method = authNone
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	status, _, body, err := f.postForm(ctx, endpoint, "token introspection at", form, auth, nil, time.Time{})
	return status, body, err
}
