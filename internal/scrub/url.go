package scrub

import (
	"net/url"
	"strings"
)

// URL returns raw as it may be shown in a message: without its user info,
// query string and fragment, which may carry credentials. A value that is
// not an absolute URL is returned as it is. One that url.Parse refuses (a
// "%" not followed by two hex digits in a password) is cut by its text:
// up to the last "@" after the scheme, and from the first "?" or "#" on.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, rest, ok := strings.Cut(raw, "://")
		if !ok {
			return raw
		}
		rest = rest[strings.LastIndexByte(rest, '@')+1:]
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		return scheme + "://" + rest
	}
	if u.Host == "" {
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}
