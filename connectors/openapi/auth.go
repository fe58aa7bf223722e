package openapi

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// API key locations.
const (
	KeyInHeader = "header"
	KeyInQuery  = "query"
	KeyInCookie = "cookie"
)

// checkSending checks what cfg sends with every request: its credentials
// (checkAuth; an API key goes in a header unless said otherwise, as in
// the configuration file) and its headers. Errors name the field, never a
// value.
func checkSending(cfg *Config) error {
	if a := cfg.Auth; a != nil && a.APIKey != nil && a.APIKey.In == "" {
		k, copied := *a.APIKey, *a
		k.In, copied.APIKey = KeyInHeader, &k
		cfg.Auth = &copied
	}
	if err := checkAuth(cfg.Auth); err != nil {
		return err
	}
	for name, v := range cfg.Headers {
		if err := checkHeader(name, v); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
	}
	return nil
}

// checkAuth validates a's fields for a caller: exactly one kind set, and
// each kind's fields usable on the wire. Errors name the field, never its
// value.
func checkAuth(a *Auth) error {
	if a == nil {
		return nil
	}
	n := 0
	for _, set := range []bool{a.Bearer != "", a.Basic != nil, a.APIKey != nil, a.OAuth2 != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("auth: exactly one of bearer, basic, api_key and oauth2 must be set (%d are)", n)
	}
	switch {
	case a.Bearer != "":
		return checkSecretText("auth.bearer", a.Bearer)
	case a.Basic != nil:
		if strings.Contains(a.Basic.Username, ":") {
			return fmt.Errorf("auth.basic.username: a user name cannot hold ':' in HTTP basic authentication")
		}
	case a.APIKey != nil:
		k := a.APIKey
		switch k.In {
		case KeyInHeader:
			if err := checkHeader(k.Name, ""); err != nil {
				return fmt.Errorf("auth.api_key.name: %w", err)
			}
		case KeyInQuery:
			if k.Name == "" {
				return fmt.Errorf("auth.api_key.name: empty")
			}
		case KeyInCookie:
			if k.Name == "" || strings.ContainsAny(k.Name, "=; \t\r\n") {
				return fmt.Errorf("auth.api_key.name: %q is not a cookie name", k.Name)
			}
			if strings.ContainsAny(k.Value, "; \t\r\n") {
				return fmt.Errorf("auth.api_key.value: a cookie value cannot hold ';', white space or line breaks")
			}
		default:
			return fmt.Errorf("auth.api_key.in: %q is not one of header, query, cookie", k.In)
		}
		return checkSecretText("auth.api_key.value", k.Value)
	case a.OAuth2 != nil:
		u, err := url.Parse(a.OAuth2.TokenURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("auth.oauth2.token_url: not an absolute http(s) URL")
		}
		if a.OAuth2.ClientID == "" {
			return fmt.Errorf("auth.oauth2.client_id: empty")
		}
	}
	return nil
}

// checkSecretText refuses an empty secret, or one a header cannot carry.
// The value is never quoted.
func checkSecretText(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s: empty", field)
	}
	if err := checkHeader("X", v); err != nil {
		return fmt.Errorf("%s: the value holds a control character or line break", field)
	}
	return nil
}

// secrets returns every secret of cfg in every form it travels in, for
// the scrubber: the credentials, a basic credential's base64, OAuth 2.0's
// client credential as sent (its parts form-encoded first, RFC 6749
// section 2.3.1) and header values that look secret (scrub.SecretHeader).
func secrets(cfg Config) []string {
	var out []string
	switch a := cfg.Auth; {
	case a == nil:
	case a.Bearer != "":
		out = append(out, a.Bearer)
	case a.Basic != nil:
		out = append(out, a.Basic.Password, basicCredential(a.Basic.Username, a.Basic.Password))
	case a.APIKey != nil:
		out = append(out, a.APIKey.Value)
	case a.OAuth2 != nil:
		out = append(out, a.OAuth2.ClientSecret, basicCredential(a.OAuth2.ClientID, a.OAuth2.ClientSecret), clientCredential(a.OAuth2))
	}
	for name, v := range cfg.Headers {
		if scrub.SecretHeader(name) {
			out = append(out, v)
		}
	}
	return out
}

// clientCredential is the HTTP basic credential with which a client
// authenticates to a token endpoint: client id and secret each
// form-encoded, then joined and base64-encoded (RFC 6749 section 2.3.1).
func clientCredential(o *OAuth2) string {
	return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(o.ClientID) + ":" + url.QueryEscape(o.ClientSecret)))
}
