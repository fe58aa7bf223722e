package openapi

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// API key locations.
const (
	KeyInHeader = "header"
	KeyInQuery  = "query"
	KeyInCookie = "cookie"
)

// A sending is what a connector sends with every request, worked out once
// from its configuration by checkSending.
type sending struct {
	// header holds the configured headers, then the credentials sent in
	// a header, which win over them.
	header http.Header
	// cookie is an API key sent in a cookie ("name=value"); keyQuery an
	// API key sent in the query (its encoded pair), keyName its name.
	cookie, keyQuery, keyName string
	// cookieNames are the names of the cookies the configuration sends
	// (its Cookie header's and the API key's), which a program's cannot
	// have (see sameName).
	cookieNames []string
	// secrets are every secret in every form it travels in, for the
	// scrubber: the credentials, a basic credential's base64, OAuth 2.0's
	// client credential as sent (its parts form-encoded first, RFC 6749
	// section 2.3.1) and header values that look secret
	// (scrub.SecretHeader).
	secrets []string
}

// checkSending checks what cfg sends with every request, its headers and
// its credentials (exactly one kind, usable on the wire; an API key goes
// in a header unless said otherwise, as in the configuration file), and
// works out their wire forms. Errors name the field, never its value.
func checkSending(cfg Config) (*sending, error) {
	s := &sending{header: http.Header{}}
	for name, v := range cfg.Headers {
		if err := checkHeader(name, v); err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		s.header.Set(name, v)
		if scrub.SecretHeader(name) {
			s.secrets = append(s.secrets, v)
		}
	}
	// Once the credentials are worked out (an API key's cookie below).
	defer func() {
		for pair := range strings.SplitSeq(s.header.Get("Cookie")+";"+s.cookie, ";") {
			if name, _, _ := strings.Cut(pair, "="); strings.TrimSpace(name) != "" {
				s.cookieNames = append(s.cookieNames, strings.TrimSpace(name))
			}
		}
	}()
	a := cfg.Auth
	if a == nil {
		return s, nil
	}
	n := 0
	for _, set := range []bool{a.Bearer != "", a.Basic != nil, a.APIKey != nil, a.OAuth2 != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("auth: exactly one of bearer, basic, api_key and oauth2 must be set (%d are)", n)
	}
	switch {
	case a.Bearer != "":
		if err := checkSecretText("auth.bearer", a.Bearer); err != nil {
			return nil, err
		}
		s.header.Set("Authorization", "Bearer "+a.Bearer)
		s.secrets = append(s.secrets, a.Bearer)
	case a.Basic != nil:
		if strings.Contains(a.Basic.Username, ":") {
			return nil, fmt.Errorf("auth.basic.username: a user name cannot hold ':' in HTTP basic authentication")
		}
		cred := basicCredential(a.Basic.Username, a.Basic.Password)
		s.header.Set("Authorization", "Basic "+cred)
		s.secrets = append(s.secrets, a.Basic.Password, cred)
	case a.APIKey != nil:
		k := a.APIKey
		switch cmp.Or(k.In, KeyInHeader) {
		case KeyInHeader:
			if err := checkHeader(k.Name, ""); err != nil {
				return nil, fmt.Errorf("auth.api_key.name: %w", err)
			}
			s.header.Set(k.Name, k.Value)
		case KeyInQuery:
			if k.Name == "" {
				return nil, fmt.Errorf("auth.api_key.name: empty")
			}
			s.keyName, s.keyQuery = k.Name, string(escapeUnreserved(append(escapeUnreserved(nil, k.Name), '='), k.Value))
		case KeyInCookie:
			if k.Name == "" || strings.ContainsAny(k.Name, "=; \t\r\n") {
				return nil, fmt.Errorf("auth.api_key.name: %q is not a cookie name", k.Name)
			}
			if strings.ContainsAny(k.Value, "; \t\r\n") {
				return nil, fmt.Errorf("auth.api_key.value: a cookie value cannot hold ';', white space or line breaks")
			}
			s.cookie = k.Name + "=" + k.Value
		default:
			return nil, fmt.Errorf("auth.api_key.in: %q is not one of header, query, cookie", k.In)
		}
		if err := checkSecretText("auth.api_key.value", k.Value); err != nil {
			return nil, err
		}
		s.secrets = append(s.secrets, k.Value)
	case a.OAuth2 != nil:
		o := a.OAuth2
		if u, err := url.Parse(o.TokenURL); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("auth.oauth2.token_url: not an absolute http(s) URL")
		}
		if o.ClientID == "" {
			return nil, fmt.Errorf("auth.oauth2.client_id: empty")
		}
		s.secrets = append(s.secrets, o.ClientSecret, basicCredential(o.ClientID, o.ClientSecret), oauth.ClientCredential(o.ClientID, o.ClientSecret))
	}
	return s, nil
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
