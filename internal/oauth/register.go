package oauth

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// registration is a client registered with an authorization server (RFC
// 7591), kept (under regID) and reused for later sign-ins.
type registration struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthMethod   string   `json:"auth_method"`
	RedirectURIs []string `json:"redirect_uris"`
	Scopes       []string `json:"scopes,omitempty"`
	// Expires is when the client secret expires; zero for never.
	Expires time.Time `json:"expires,omitzero"`
}

// regID is the record id of the registrations with d's authorization
// server.
func regID(d *discovery) string { return cmp.Or(d.meta.Issuer, d.meta.RegistrationEndpoint) }

// fits reports whether the registration can sign in with redirect and
// scopes at now: it registered that redirect URI and those scopes (when
// it registered any), and its secret has not expired.
func (r *registration) fits(redirect string, scopes []string, now time.Time) bool {
	return slices.Contains(r.RedirectURIs, redirect) &&
		(len(r.Scopes) == 0 || covers(r.Scopes, scopes)) &&
		(r.Expires.IsZero() || now.Add(time.Minute).Before(r.Expires))
}

func (r *registration) client(d *discovery) clientAuth {
	return clientAuth{id: r.ClientID, secret: r.ClientSecret, method: r.AuthMethod, audience: d.meta.Issuer, regID: regID(d)}
}

// maxExpiresAt is 9999-12-31T23:59:59Z, the latest client_secret_expires_at
// taken for a date.
const maxExpiresAt = 253402300799

// maxClientCredential bounds a registered client_id and client_secret:
// issuers send fewer than 256 bytes, and each is sent with every token
// request, stored and kept in the scrubber.
const maxClientCredential = 4096

// loadRegistration returns the stored registration with d's server (nil
// when there is none or it cannot be read).
func (s *Session) loadRegistration(ctx context.Context, d *discovery) *registration {
	var r registration
	raw, err := s.vault.load(ctx, KindClient, regID(d), &r)
	if err != nil {
		s.log.Warn("reading the stored client registration failed; registering again", "err", err)
	}
	if err != nil || raw == nil || r.ClientID == "" {
		return nil
	}
	s.cfg.Scrubber.Add(r.ClientSecret)
	return &r
}

// forgetRegistration drops a registration the authorization server no
// longer knows (invalid_client), so that the next sign-in registers again.
func (s *Session) forgetRegistration(ctx context.Context, id string) {
	if err := s.vault.put(ctx, KindClient, id, nil); err != nil {
		s.log.Warn("forgetting a client registration the server refused", "err", err)
		return
	}
	s.log.Info("the authorization server no longer knows our client registration; the next sign-in registers again", "issuer", redacted(id))
}

// clientName is the name of the clients registered.
const clientName = "codemode-mcp"

// register registers a client (RFC 7591) for a person's sign-in through
// redirect: a native application (application_type native) using the
// authorization code and refresh token grants, authenticating at the
// token endpoint as the server allows (none, a public client, when it
// can).
func (s *Session) register(ctx context.Context, d *discovery, redirect string, scopes []string) (*registration, error) {
	method := authNone
	if m := d.meta.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, authNone) {
		method = chooseAuthMethod(m, true)
	}
	req := map[string]any{
		"client_name":                clientName,
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{GrantAuthorizationCode, "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	}
	if len(scopes) > 0 {
		req["scope"] = strings.Join(scopes, " ")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	status, _, answer, err := s.f.send(ctx, http.MethodPost, d.meta.RegistrationEndpoint, "client registration at "+redacted(d.meta.RegistrationEndpoint), "application/json", body, nil)
	if err != nil {
		return nil, s.errorf("%w", err)
	}
	if status/100 != 2 {
		return nil, s.errorf("registering a client: %w", newOAuthError("the registration endpoint", status, answer, nil))
	}
	var m struct {
		ClientID              string  `json:"client_id"`
		ClientSecret          string  `json:"client_secret"`
		AuthMethod            string  `json:"token_endpoint_auth_method"`
		ClientSecretExpiresAt float64 `json:"client_secret_expires_at"`
	}
	if err := json.Unmarshal(answer, &m); err != nil {
		return nil, s.errorf("the registration endpoint's answer is not a client: %w", err)
	}
	switch {
	case len(m.ClientID) > maxClientCredential:
		return nil, s.errorf("the registration endpoint's answer has a client_id of %d bytes (at most %d)", len(m.ClientID), maxClientCredential)
	case len(m.ClientSecret) > maxClientCredential:
		return nil, s.errorf("the registration endpoint's answer has a client_secret of %d bytes (at most %d)", len(m.ClientSecret), maxClientCredential)
	}
	s.cfg.Scrubber.Add(m.ClientSecret)
	if m.ClientID == "" || !headerSafe(m.ClientID) {
		return nil, s.errorf("the registration endpoint's answer has no usable client_id")
	}
	r := &registration{ClientID: m.ClientID, ClientSecret: m.ClientSecret, AuthMethod: m.AuthMethod, RedirectURIs: []string{redirect}, Scopes: scopes}
	switch {
	case r.ClientSecret == "":
		r.AuthMethod = authNone
	case r.AuthMethod == "":
		// A secret without a method: as the server supports.
		r.AuthMethod = chooseAuthMethod(d.meta.TokenEndpointAuthMethodsSupported, true)
	case r.AuthMethod != authBasic && r.AuthMethod != authPost && r.AuthMethod != authNone:
		// (private_key_jwt without a key, a TLS client certificate: every
		// sign-in with it would fail at the code's exchange.)
		return nil, s.errorf("the registration endpoint registered a client that authenticates by %q, which this client cannot (%s, %s or %s)", clean(r.AuthMethod, 64), authBasic, authPost, authNone)
	}
	// (0 says never; so does a date past 9999, which time.Unix would
	// wrap around into the past: every sign-in would register again.)
	if at := m.ClientSecretExpiresAt; at > 0 && at <= maxExpiresAt {
		r.Expires = time.Unix(int64(at), 0)
	}
	s.log.Info("registered a client with the authorization server", "authorization_server", redacted(d.issuerOrEndpoint()), "auth_method", r.AuthMethod)
	return r, nil
}
