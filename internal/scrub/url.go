package scrub

import "net/url"

// URL returns raw as it may be shown in a message: without its user info,
// query string and fragment, which may carry credentials. A value that is
// not an absolute URL is returned as it is.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}
