package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/resource"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// A guard stands in front of both HTTP transports and the approval
// console. Every request must first pass
//
//  1. Host: a loopback name, an IP literal or one of AllowedHosts (a page
//     that rebinds its own DNS name to this machine sends its own name).
//
// The paths where clients look for OAuth (oauthPath) are then answered 404
// with a JSON body that says the server takes a bearer token: a client
// refused without one goes looking for an authorization server and shows
// the user what it found there, which must not be the console's login
// page. A request for any other path than the MCP endpoints then goes to the
// console (when one is served), which has rules of its own for pages and
// form posts (package console: sessions, CSRF tokens, same-origin posts),
// under the same read and write deadlines. A request for an MCP endpoint
// (or for anything, without a console) reaches the MCP handler only after
// passing, in this order:
//
//  2. Origin: absent (not a browser), loopback, or one of AllowedOrigins;
//  3. the bearer token, when one is configured (CORS preflights of an
//     allowed origin excepted: browsers send them without credentials):
//     401 without one, with a WWW-Authenticate that says a bearer token is
//     required; a wrong one counts against its client address (Failures),
//     which is refused with 429 and Retry-After once it has failed too
//     often, before its token is looked at. Under server.auth, the
//     issuer's access token instead (resource.go): its Principal goes into
//     the request's context, and a POST's tools/call and task requests
//     need their scope (ToolScopes), checked once the body is read;
//  4. for a POST, Content-Type application/json (a page can send
//     text/plain without a preflight) and a body of at most MaxBody bytes,
//     read within ReadTimeout before anything parses it;
//  5. on streamable HTTP, the session rules of the specification: a request
//     other than initialize needs the Mcp-Session-Id of a live session
//     (400 without one, 404 for one this server did not issue, that ended,
//     or that another person opened: sessions.go); on SSE, under an
//     issuer, a message for another person's session is 404 too, and a
//     request POSTed while maxWaitingAnswers answers wait unread on its
//     session's event stream is 429 (sseStream), and subscriptions/listen,
//     which mcp-go's SSE transport would never end, is 400.
//
// On streamable HTTP the task front (front.go) then answers the task
// requests; the transport gets everything else. PathMetrics, when metrics
// are served (Options.Metrics), passes 1 to 3 like an MCP endpoint (under
// an issuer, with an access token of metricsScope) and is answered for GET
// and HEAD only, with no body or session rules.
//
// Responses are written under a per-write deadline (WriteTimeout), so a
// client that stops reading is dropped instead of holding its handler, and
// never carry Access-Control-Allow-Origin: * (ServeHTTP configures the
// transports' CORS so), but the protected resource metadata of
// server.auth: a public document, answered before any other check, that
// browser-based clients must be able to read.
type guard struct {
	// fixed at creation
	opts           Options   // the server's: its HTTP with the defaults, and a Logger
	bearer         bearer    // the bearer token required; nil: none
	allowedOrigins []string  // lower case scheme://host[:port]
	allowedHosts   []string  // lower case host or host:port
	sessions       *sessions // streamable HTTP; nil for SSE
	sse            *sseIDs   // SSE; nil for streamable HTTP
	next           http.Handler
	mcpPaths       []string // the MCP endpoints
	failures       *throttle.Failures
	// rs, under server.auth, validates access tokens instead of token
	// and serves the protected resource metadata (resource.go).
	rs *resourceServer
	// consoleSignsIn: under rs, the console signs people in through the
	// issuer itself (server.auth.console), so its requests need no
	// bearer token.
	consoleSignsIn bool
	// front answers the task requests of a POST (body; nil: not a POST)
	// that passed every check, in front of the transport, and reports
	// whether it did (nil: none).
	front func(w http.ResponseWriter, r *http.Request, body *rpcBody) bool
}

// newGuard makes the guard of next; the transport sets the MCP endpoints,
// the sessions and the front it has.
func newGuard(opts *Options, next http.Handler) *guard {
	o := *opts
	o.HTTP, o.Logger = httpDefaults(o.HTTP), cmp.Or(o.Logger, slog.Default())
	g := &guard{
		opts:           o,
		allowedOrigins: lowerAll(o.HTTP.AllowedOrigins),
		allowedHosts:   lowerAll(o.HTTP.AllowedHosts),
		next:           next,
		failures:       cmp.Or(o.AuthFailures, throttle.New(0, 0, nil)),
	}
	if opts.AuthToken != "" {
		g.bearer = ownToken(sha256.Sum256([]byte(opts.AuthToken)))
	}
	if a := opts.Auth; a != nil && a.Resource != "" {
		g.allowHostOf(a.Resource) // it names this server (behind a proxy)
	}
	return g
}

// allowHostOf allows the host of a URL the server is reached at.
func (g *guard) allowHostOf(rawURL string) {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		g.allowedHosts = append(g.allowedHosts, strings.ToLower(u.Host), strings.ToLower(u.Hostname()))
	}
}

func lowerAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.TrimSuffix(strings.ToLower(s), "/")
	}
	return out
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: Host %s is not served here (server.allowed_hosts)", short.Quote(r.Host)))
		return
	}
	if g.rs != nil && g.rs.servesMetadata(r.URL.Path) {
		g.rs.metadata.ServeHTTP(w, r)
		return
	}
	if oauthPath(r.URL.Path) {
		g.noOAuth(w)
		return
	}
	metrics := g.opts.Metrics != nil && r.URL.Path == PathMetrics
	if g.opts.Console != nil && !metrics && !slices.Contains(g.mcpPaths, r.URL.Path) {
		if g.rs != nil && !g.consoleSignsIn {
			if r.Header.Get("Authorization") == "" {
				g.rs.challenge(w, http.StatusUnauthorized, "", consoleNeedsToken, "")
				return
			}
			if r = g.authenticate(w, r, consoleScope); r == nil {
				return
			}
		}
		g.serveConsole(w, r)
		return
	}
	origin := r.Header.Get("Origin")
	configured := origin != "" && slices.Contains(g.allowedOrigins, strings.ToLower(origin))
	if origin != "" && !configured && !isLoopbackOrigin(origin) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: Origin %s is not allowed (server.allowed_origins)", short.Quote(origin)))
		return
	}
	if r.Method == http.MethodOptions {
		if configured && r.Header.Get("Access-Control-Request-Method") != "" {
			g.next.ServeHTTP(w, r) // the transport answers the CORS preflight
			return
		}
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	scope := ""
	if metrics {
		scope = metricsScope
	}
	if r = g.authenticate(w, r, scope); r == nil {
		return
	}
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: g.opts.HTTP.WriteTimeout}
	defer dw.clear()
	if metrics { // a scrape: GET and HEAD, under the per-write deadline
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			refuse(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		g.opts.Metrics.ServeHTTP(dw, r)
		return
	}
	var post *rpcBody // a POST's, whose messages the checks below read once
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			refuse(w, http.StatusUnsupportedMediaType, "Unsupported Media Type: a POST body must be Content-Type: application/json")
			return
		}
		body, ok := g.readBody(w, r)
		if !ok {
			return
		}
		post = &rpcBody{raw: body}
		if g.rs != nil && !g.authorizeBody(w, r, post) {
			return
		}
	}
	if g.rs != nil && g.sse != nil && r.URL.Path == PathMessage && !g.sse.owns(r.URL.Query().Get("sessionId"), r) {
		http.Error(w, "Not Found: unknown or ended session (open the event stream again)", http.StatusNotFound)
		return
	}
	if g.sse != nil && r.URL.Path == PathSSE && r.Method == http.MethodGet { // for the answers waiting on it
		st := &sseStream{}
		r, dw.answered = r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, st)), &st.waiting
		defer func() { g.sse.streams.CompareAndDelete(st.id, st) }()
	}
	if g.sse != nil && r.URL.Path == PathMessage {
		// mcp-go serves subscriptions/listen on a goroutine whose context
		// never ends, and it waits for that: each would be held until the
		// process exits.
		if m := post.message(); m != nil && m.Method == mcp.MethodSubscriptionsListen {
			http.Error(w, "Bad Request: subscriptions/listen is not served on the legacy SSE transport: use streamable HTTP", http.StatusBadRequest)
			return
		}
	}
	if g.sse != nil && r.URL.Path == PathMessage && post.answered() && !g.sse.waitsOn(r.URL.Query().Get("sessionId")) {
		refuse(w, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: %d answers wait on the session's event stream, which its client does not read", maxWaitingAnswers))
		return
	}
	if g.sessions != nil { // streamable HTTP; for dw.sent, see sentCounter
		var status int
		var msg string
		if dw.sent, status, msg = g.sessions.check(r, post); status != 0 {
			http.Error(w, msg, status)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), sentKey{}, dw.sent))
	}
	if g.opts.TraceContext && r.Header.Get(propagate.Traceparent) != "" {
		r = r.WithContext(propagate.FromHeader(r.Context(), r.Header))
	}
	if g.front != nil && g.front(dw, r, post) {
		return
	}
	g.next.ServeHTTP(dw, r)
}

// serveConsole hands a request to the console with the read deadline of a
// body (the console reads small forms) and the per-write deadline.
func (g *guard) serveConsole(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.opts.HTTP.ReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	dw := &deadlineWriter{ResponseWriter: w, rc: rc, d: g.opts.HTTP.WriteTimeout}
	defer dw.clear()
	g.opts.Console.ServeHTTP(dw, r)
}

// refuse answers a request the guard stops and closes its connection, so
// the server does not wait for the rest of a body nobody will read.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// hostAllowed reports whether a Host header names this server: a loopback
// name, an IP literal (no DNS name, so nothing to rebind) or an allowed
// host (by name, or by name and port).
func (g *guard) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if host == "" {
		return false
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if name == "localhost" {
		return true
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return slices.Contains(g.allowedHosts, name) || slices.Contains(g.allowedHosts, host)
}

// isLoopbackOrigin reports whether a browser origin is on this machine.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// consoleNeedsToken is what a browser is told at the console of a server
// with an issuer but without server.auth.console, through which the
// console would sign people in.
const consoleNeedsToken = "the approval console of a server with an issuer (server.auth) takes a bearer token with the scope codemode:admin unless server.auth.console names the client it signs people in as: decide through the MCP tools (codemode_pending, codemode_approve), or run codemode-mcp console on the server's machine"

// tokenRequired says what a client without the bearer token must send.
// Clients show it: from the 401's WWW-Authenticate and body, or, when
// they go looking for OAuth after the 401, from the JSON of noOAuth. It
// has no "Bearer <…>": clients redact what looks like a token after
// "Bearer " in what they show (Claude Code does).
const tokenRequired = "this server requires a bearer token in the Authorization header (its server.auth_token or CODEMODE_TOKEN)"

// A bearer is the kind of bearer token the MCP endpoints take: the
// server's own (ownToken: server.auth_token), or the issuer's access
// tokens (resourceServer: server.auth).
type bearer interface {
	// principal says whose the token of an Authorization header is (nil:
	// nobody's in particular). An error wrapping resource.ErrInvalid says
	// why the token is not good here; any other is a failure to check it.
	principal(ctx context.Context, header []string) (*codemode.Principal, error)
	// challenge refuses a request as the scheme says: the error code
	// ("": no token was sent), why, and the scope the token lacks.
	challenge(w http.ResponseWriter, status int, code, description, scope string)
	// words says what a request without a token is told it needs, and
	// what a token that is not good is called (plural, and with "a").
	words() (wanted, bad, aBad string)
}

// authenticate checks the request's bearer token, when one is required,
// and returns the request with the token's Principal in its context, or
// answers it and returns nil: 401 (WWW-Authenticate) without a token or
// with a bad one; 429 (Retry-After) when its address has failed too
// often, before its token is looked at (an access token may cost the
// issuer an introspection); 503 when the issuer could not be asked; 403
// when the access token lacks scope (if not ""). Only bad tokens count as
// failures and are logged (at a bounded rate): a client sending none is
// not guessing, and clients commonly try once without.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request, scope string) *http.Request {
	if g.bearer == nil {
		return r
	}
	wanted, bad, aBad := g.bearer.words()
	header := r.Header.Values("Authorization")
	if len(header) == 0 || header[0] == "" {
		g.bearer.challenge(w, http.StatusUnauthorized, "", wanted, "")
		return nil
	}
	if ok, secs := g.failures.Allow(r.RemoteAddr); !ok {
		g.failures.Warn(g.opts.Logger, "refused: too many "+bad+" from this address", "remote", r.RemoteAddr, "retryAfter", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		refuse(w, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: too many %s from your address; try again in %d s", bad, secs))
		return nil
	}
	p, err := g.bearer.principal(r.Context(), header)
	switch {
	case errors.Is(err, resource.ErrInvalid):
		why := strings.TrimPrefix(err.Error(), resource.ErrInvalid.Error()+": ")
		g.failures.Fail(r.RemoteAddr)
		g.failures.Warn(g.opts.Logger, aBad, "remote", r.RemoteAddr, "why", why)
		g.bearer.challenge(w, http.StatusUnauthorized, "invalid_token", why, "")
		return nil
	case err != nil:
		g.opts.Logger.Error("server.auth: cannot check an access token", "err", err)
		refuse(w, http.StatusServiceUnavailable, "Service Unavailable: the authorization server could not be asked about the access token; try again")
		return nil
	case p == nil: // the server's own token grants everything
		return r
	case scope != "" && !p.HasScope(scope):
		g.bearer.challenge(w, http.StatusForbidden, "insufficient_scope", "the access token lacks the scope "+scope, scope)
		return nil
	}
	return r.WithContext(codemode.WithPrincipal(r.Context(), p))
}

// ownToken is the server's own bearer token (server.auth_token), hashed.
type ownToken [sha256.Size]byte

// principal checks the token in constant time (over hashes, so the
// token's length does not leak either). The scheme is case-insensitive.
func (t ownToken) principal(_ context.Context, header []string) (*codemode.Principal, error) {
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header[0]), " ")
	got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], t[:]) != 1 {
		return nil, fmt.Errorf("%w: the bearer token is not this server's", resource.ErrInvalid)
	}
	return nil, nil
}

func (ownToken) challenge(w http.ResponseWriter, status int, code, description, _ string) {
	params := `Bearer realm="codemode-mcp"`
	if code != "" {
		params += `, error="` + code + `"`
	}
	w.Header().Set("WWW-Authenticate", params+`, error_description="`+description+`"`)
	refuse(w, status, "Unauthorized: "+description)
}

func (ownToken) words() (wanted, bad, aBad string) {
	return tokenRequired, "wrong bearer tokens", "a wrong bearer token"
}

// oauthPath reports whether a path is one where MCP clients look for OAuth
// after a 401: the discovery documents of RFC 9728 (protected resource),
// RFC 8414 (authorization server, also with the path inserted) and OpenID
// Connect (also appended to a path), anything else under /.well-known/
// (the console has nothing there), and the endpoints clients assume when
// discovery finds none (/register, /authorize, /token).
func oauthPath(p string) bool {
	switch p {
	case "/register", "/authorize", "/token":
		return true
	}
	return strings.HasPrefix(p, "/.well-known/") || strings.Contains(p, "/.well-known/openid-configuration") || strings.Contains(p, "/.well-known/oauth-authorization-server")
}

// noOAuth answers a request for an OAuth path: 404, since this server has
// no authorization server, with a JSON body (in the form of an OAuth error)
// that says what it takes instead.
func (g *guard) noOAuth(w http.ResponseWriter) {
	desc := "no OAuth authorization server here"
	switch {
	case g.rs != nil:
		desc += ": this server's authorization server is " + g.rs.v.Issuer() + " (its protected resource metadata: " + g.rs.origin + g.rs.metadataPath + ")"
	case g.bearer != nil:
		desc += ": " + tokenRequired
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "not_found", "error_description": desc})
}

// readBody reads a POST body of at most maxBody bytes within readTimeout
// and puts it back for the transport, or refuses the request.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	tooLarge := fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (server.max_body)", g.opts.HTTP.MaxBody)
	if r.ContentLength > g.opts.HTTP.MaxBody {
		refuse(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.opts.HTTP.ReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.HTTP.MaxBody))
	_ = rc.SetReadDeadline(time.Time{})
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		refuse(w, http.StatusRequestEntityTooLarge, tooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		refuse(w, http.StatusRequestTimeout, fmt.Sprintf("Request Timeout: the body was not received within %v (server.read_timeout)", g.opts.HTTP.ReadTimeout))
	case err != nil:
		refuse(w, http.StatusBadRequest, "Bad Request: reading the body: "+err.Error())
	default:
		r.Body = io.NopCloser(bytes.NewReader(body))
		return body, true
	}
	return nil, false
}

// deadlineWriter gives every write of a response a fresh deadline and
// counts the notifications written on it (sent).
type deadlineWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	d    time.Duration
	sent *sentCounter // nil: not counted
	// answered counts down the answers written on a legacy SSE event
	// stream (sseStream); nil: not one.
	answered *atomic.Int64
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	n, err := w.ResponseWriter.Write(p)
	if err == nil && w.sent != nil && isNotificationEvent(p) {
		w.sent.add()
	}
	if err == nil && w.answered != nil && isAnswerEvent(p) {
		w.answered.Add(-1)
	}
	return n, err
}

func (w *deadlineWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clear lifts the deadline once the handler is done, so the connection's
// next request starts without one.
func (w *deadlineWriter) clear() { _ = w.rc.SetWriteDeadline(time.Time{}) }

var _ mcpserver.SessionIdManagerResolver = (*sessions)(nil)
