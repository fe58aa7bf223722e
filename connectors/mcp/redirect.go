package mcp

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// maxRedirects is how many redirects one request to a remote server
// follows (Go's own default).
const maxRedirects = 10

// checkRedirect is the redirect policy of a remote server's HTTP client:
// a redirect is followed only within the origin (scheme, host and port)
// of the request that began it, at most maxRedirects times. Go's client
// would follow it anywhere, taking the configured headers (the
// connector's credentials, which it drops only when they are named
// Authorization or Cookie) and re-sending a POST's body (a tool's
// arguments) to whatever server the redirect names. Refusing it, rather
// than following it without the headers, keeps the request itself at home
// too; the error names both origins.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case !origin.Same(req.URL, first):
		home := url.URL{Scheme: first.Scheme, Host: first.Host}
		return fmt.Errorf("redirect to %s refused: only redirects within %s are followed", scrub.URL(req.URL.String()), home.String())
	case len(via) >= maxRedirects:
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}
