// Package origin compares the origins of URLs: the scheme, host and port
// that credentials configured for one server must not leave.
package origin

import (
	"net/url"
	"strings"
)

// Same reports whether a and b have the same scheme, host and port
// (default ports made explicit; scheme and host compared without regard
// to case).
func Same(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// IsHTTP reports whether s is written as an http(s) URL (the scheme in
// any case): the configuration tells a document's URL from its path by
// it, and the OpenAPI connector, given either, does the same.
func IsHTTP(s string) bool {
	l := strings.ToLower(s[:min(len(s), len("https://"))])
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}
