package config

import (
	"encoding/base64"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// Secrets returns every secret value the configuration holds, for a
// scrubber to remove from what the model sees and what is stored: the
// server's auth token and its introspection client's secret; the password and key passphrase of a PostgreSQL store URL; each stdio connector's env values; each header value
// (and the credential after an auth scheme such as "Bearer ") but those of
// headers that describe the exchange (scrub.SecretHeader); the password
// (or a lone user name) and the query values of every configured URL;
// OpenAPI credentials; the client secret of a url connector's oauth; the
// header values (and URL credentials) of telemetry.traces; and
// every value taken from the environment where a secret may stand
// (EnvValues: a token passed in args or in a URL's path). The order is
// stable; values may repeat. Values shorter than scrub.MinLen are returned
// but no scrubber can remove them without mangling ordinary text.
//
// A value is a secret by where it is written or where it came from, not by
// how it looks (an env value such as "production" is scrubbed too), with
// one exception: env values and values from the environment that cannot
// be credentials and that tools echo all the time (true/false, numbers,
// absolute file paths) are not collected, since scrubbing them would
// garble ordinary results.
func (c *Config) Secrets() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if strings.TrimSpace(v) != "" {
				out = append(out, v)
			}
		}
	}
	add(c.Server.AuthToken)
	if a := c.Server.Auth; a != nil {
		add(a.Introspection.ClientSecret)
		if a.Console != nil {
			add(a.Console.ClientSecret)
		}
	}
	add(DatabaseURLSecrets(c.Store.Path)...)
	for i := range c.Connectors {
		cc := &c.Connectors[i]
		for _, k := range slices.Sorted(maps.Keys(cc.Env)) {
			if v := cc.Env[k]; !plainSetting(v) {
				add(v)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(cc.Headers)) {
			if scrub.SecretHeader(k) {
				add(headerSecrets(cc.Headers[k])...)
			}
		}
		for _, u := range []string{cc.URL, cc.OpenAPI, cc.BaseURL} {
			add(urlSecrets(u)...)
		}
		if o := cc.OAuth; o != nil {
			add(o.ClientSecret)
		}
		if x := cc.TokenExchange; x != nil {
			add(x.ClientSecret)
		}
		if a := cc.Auth; a != nil {
			add(a.Bearer)
			if b := a.Basic; b != nil {
				add(b.Password, base64.StdEncoding.EncodeToString([]byte(b.Username+":"+b.Password)))
			}
			if k := a.APIKey; k != nil {
				add(k.Value)
			}
			if o := a.OAuth2; o != nil {
				add(o.ClientSecret)
				add(urlSecrets(o.TokenURL)...)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Telemetry.Traces.Headers)) {
		add(headerSecrets(c.Telemetry.Traces.Headers[k])...)
	}
	add(urlSecrets(c.Telemetry.Traces.Endpoint)...)
	for _, v := range c.EnvValues {
		if !plainSetting(v) {
			add(v)
		}
	}
	return out
}

// plainSetting reports whether an env value (or a value from the
// environment) is a boolean, a number or an absolute path.
func plainSetting(v string) bool {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	return filepath.IsAbs(v) || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/")
}

// headerSecrets returns a header value and, when it has the form
// "Scheme credential", the credential alone.
func headerSecrets(v string) []string {
	out := []string{v}
	if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && scheme != "" && !strings.Contains(scheme, "=") {
		out = append(out, strings.TrimSpace(cred))
	}
	return out
}

// urlSecrets returns the credentials and query values of a URL ("" and
// paths give none).
func urlSecrets(raw string) []string {
	if !origin.IsHTTP(raw) {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		} else {
			out = append(out, u.User.Username())
		}
	}
	q := u.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		out = append(out, q[k]...)
	}
	return out
}

// quoteURL quotes a URL the configuration refuses for a message about it,
// clipped, and without the parts that may hold a credential: the user
// information (before the last '@' ahead of the first '/' after the
// scheme: a password may hold '?' or '#', so the user information goes
// first) and then the query and fragment, each marked "…". It works on the
// text, since a refused URL need not parse.
func quoteURL(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	end := len(s)
	if i := strings.IndexByte(s[start:], '/'); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
		s = s[:start] + "…" + s[start+at:]
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i+1] + "…"
	}
	return short.Quote(s)
}

// DatabaseURLSecrets returns the secrets of a PostgreSQL URL: the password
// in its user information, and the values of its parameters that are
// secrets (password, and sslpassword, the client key's passphrase; the
// other libpq parameters hold names, paths and modes); nothing for
// anything else.
func DatabaseURLSecrets(raw string) []string {
	if !IsPostgresURL(raw) {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable: the whole of it stays out of what is shown.
		return []string{raw}
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	q := u.Query()
	return append(append(out, q["password"]...), q["sslpassword"]...)
}
