package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// maxAnswer bounds every answer read from a protected resource's metadata,
// an authorization server's metadata, registration or token endpoint.
const maxAnswer = 1 << 20

// maxErrorText bounds the error description quoted from a server.
const maxErrorText = 300

// errTooLarge is wrapped by the error of an answer over maxAnswer.
var errTooLarge = errors.New("answer too large")

// secureURL checks that raw is an absolute https URL, or http to a
// loopback address (a server on this machine), without a fragment:
// tokens, codes and client secrets travel only over HTTPS or stay on this
// machine. what names the URL in the error ("the token endpoint").
func secureURL(raw, what string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return nil, fmt.Errorf("%s %q is not an absolute URL", what, clip(raw))
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%s %q is not HTTPS (plain http is accepted only for a loopback address)", what, clip(raw))
		}
	default:
		return nil, fmt.Errorf("%s %q is not an http(s) URL", what, clip(raw))
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%s %q has a fragment", what, clip(raw))
	}
	return u, nil
}

// namedURL checks a URL that a server named (in its challenge, its
// metadata or a redirect) as secureURL does, and further: plain http only
// when the server that named it is itself on this machine (local). A
// remote server naming http://127.0.0.1:… would otherwise make this
// process GET, and at sign-in POST to, ports of this machine, with no
// person involved (discovery runs at the first 401). The error names the
// URL without its query.
func namedURL(raw, what string, local bool) (*url.URL, error) {
	u, err := secureURL(raw, what)
	if err == nil && !local && strings.EqualFold(u.Scheme, "http") {
		return nil, fmt.Errorf("%s %s is plain http to this machine, named by a server that is not on it; refusing it (plain http is accepted only from a server on this machine)",
			what, redacted(raw))
	}
	return u, err
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// oauthError is an error answer of an authorization server endpoint: its
// HTTP status and the error code and description of RFC 6749 section
// 5.2, never the rest of the body (which might echo a secret).
type oauthError struct {
	endpoint    string // "the token endpoint"
	status      int
	code        string
	description string
}

func (e *oauthError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.endpoint, e.status)
	if e.code != "" {
		msg += " " + e.code
	}
	if e.description != "" {
		msg += ": " + e.description
	}
	return msg
}

// newOAuthError reads an error answer's code and description, with the
// secrets of sc (the request's: nil for none) scrubbed out of them. They
// are scrubbed here, not by the caller's sc.Error, so that the error stays
// an *oauthError that IsOAuthError finds: a refusal whose description
// echoes a secret is still a refusal.
func newOAuthError(endpoint string, status int, body []byte, sc *scrub.Scrubber) *oauthError {
	e := &oauthError{endpoint: endpoint, status: status}
	var m struct {
		Error            any `json:"error"`
		ErrorDescription any `json:"error_description"`
	}
	if json.Unmarshal(body, &m) == nil {
		if s, ok := m.Error.(string); ok {
			e.code = clean(sc.String(s), 64)
		}
		if s, ok := m.ErrorDescription.(string); ok {
			e.description = clean(sc.String(s), maxErrorText)
		}
	}
	return e
}

// clean makes text from a server fit a one-line message: control
// characters removed, at most n bytes.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return short.Clip(strings.TrimSpace(s), n)
}

// clip bounds a URL or value quoted in an error.
func clip(s string) string { return clean(s, 200) }

// redacted shows a URL without its query and fragment, which may carry
// secrets.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return clip(raw)
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return clip(u.String())
}

// JSON fetches rawURL (which Issuer or CheckURL checked) and decodes its
// JSON answer into v; what names the document in errors. It reports a 4xx
// answer as notFound, so that discovery can try the next place: besides
// 404 and 410, some servers answer 400, 401 or 405 where nothing is
// published.
func (f *Fetcher) JSON(ctx context.Context, rawURL, what string, v any) (notFound bool, err error) {
	where := what + " at " + redacted(rawURL)
	status, _, body, err := f.send(ctx, http.MethodGet, rawURL, where, "", nil, nil)
	switch {
	case err != nil:
		return false, err
	case status/100 != 2:
		return status/100 == 4, fmt.Errorf("%s: HTTP %d", where, status)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("%s is not a JSON object: %w", where, err)
	}
	return false, nil
}

// A Fetcher makes the requests of the client, of a resource server and of
// the console to an authorization server: the metadata, registration,
// tokens, the JWK Set, introspection. Every answer is bounded in size
// and time; URLs must be HTTPS or loopback. It is safe for concurrent
// use.
type Fetcher struct {
	client  *http.Client // over a transport of its own
	timeout time.Duration
}

// send makes one request asking for JSON (unless header says what it
// accepts), within the Fetcher's timeout, and returns the status, the
// headers and the bounded body; where names the request in errors
// ("token request to https://…"). A POST follows no redirect (see
// NewFetcher): a form carrying a code or a secret goes where it was
// addressed or nowhere.
func (f *Fetcher) send(ctx context.Context, method, rawURL, where, contentType string, body []byte, header http.Header) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	maps.Copy(req.Header, header)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		// A *url.Error quotes the URL with its query (a redirect's
		// too), which may hold a secret: where names the request.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return 0, nil, nil, fmt.Errorf("%s: %w", where, err)
	case len(b) > maxAnswer:
		return 0, nil, nil, fmt.Errorf("%s: %w: over %d bytes", where, errTooLarge, maxAnswer)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// maxRedirects bounds the redirects a metadata request follows.
const maxRedirects = 3

// NewFetcher returns a Fetcher whose requests each take at most timeout,
// whose GETs follow at most maxRedirects redirects, to HTTPS URLs or
// (from a server on this machine only: namedURL) plain http to loopback,
// and whose POSTs follow none.
func NewFetcher(timeout time.Duration) *Fetcher {
	c := &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.Method != http.MethodGet || len(via) > maxRedirects {
				return http.ErrUseLastResponse
			}
			_, err := namedURL(req.URL.String(), "a redirect", isLoopback(via[len(via)-1].URL.Hostname()))
			return err
		},
	}
	return &Fetcher{client: c, timeout: timeout}
}

// Close closes the idle connections of the Fetcher's transport.
func (f *Fetcher) Close() { f.client.CloseIdleConnections() }
