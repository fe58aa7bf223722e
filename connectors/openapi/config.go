package openapi

import (
	"encoding/base64"
	"log/slog"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// Config describes one OpenAPI connector.
type Config struct {
	// Name is the connector's global name in the sandbox.
	Name string
	// Document is the OpenAPI document: a file path or an http(s) URL;
	// JSON or YAML; OpenAPI 3.0, 3.1 or Swagger 2.0.
	Document string
	// BaseURL, when set, replaces the document's servers.
	BaseURL string
	// Headers are sent with every request (after the document's own
	// header parameters, so they win).
	Headers map[string]string
	// Auth is how requests authenticate; nil for none.
	Auth *Auth
	// Include and Exclude select operations: a pattern is a glob
	// (path.Match) over the method name or the operationId, "tag:NAME"
	// (NAME a glob over the operation's tags) or "path:/repos/*" (a glob
	// over the path template in which * also matches '/'). An operation is
	// kept when Include is empty or a pattern of it matches, and no pattern
	// of Exclude does.
	Include, Exclude []string
	// CallTimeout bounds one call; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// CacheDir holds fetched documents and derived methods; "" disables
	// the cache.
	CacheDir string
	// Scrubber receives every secret of the connector (credentials,
	// tokens obtained at run time) and scrubs what the connector returns;
	// nil means a scrubber of its own.
	Scrubber *scrub.Scrubber
	// Logger receives the connector's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultCallTimeout is the call timeout when Config sets none.
const DefaultCallTimeout = 30 * time.Second

// maxResponseBytes caps a response body.
const maxResponseBytes = 16 << 20

// Auth is how an OpenAPI connector authenticates. Exactly one field is set.
type Auth struct {
	Bearer string
	Basic  *BasicAuth
	APIKey *APIKey
	OAuth2 *OAuth2
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	Username, Password string
}

// APIKey is a key sent in a header, a query parameter or a cookie.
type APIKey struct {
	In    string // "header" | "query" | "cookie"
	Name  string
	Value string
}

// OAuth2 is the OAuth 2.0 client credentials grant (RFC 6749 §4.4): a
// token is requested from TokenURL, cached until it expires, and requested
// again on expiry or when a request is answered 401.
type OAuth2 struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// basicCredential is the base64 of "user:pass" that HTTP basic
// authentication sends (and the OAuth 2.0 client authentication).
func basicCredential(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}
