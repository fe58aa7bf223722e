package oauth

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// closeGrace bounds how long closing an Attempt waits for its listener's
// connections: a redirect being answered ends at once (its exchange is
// canceled); a connection that sent nothing (a browser's preconnect)
// would hold net/http's Shutdown for 5 s.
const closeGrace = time.Second

// discoverNow discovers the server's authorization (see discover), from
// the server's last Bearer challenge (when no answer gave one yet, it asks
// the server for one first: probe), and picks the scopes to ask for.
func (s *Session) discoverNow(ctx context.Context) (*discovery, []string, error) {
	s.mu.Lock()
	ch := s.challenge
	s.mu.Unlock()
	if !ch.found {
		ch = s.probe(ctx)
	}
	d, err := s.f.discover(ctx, s.cfg.Server, ch)
	if err != nil {
		return nil, nil, err
	}
	s.log.Debug("discovered the authorization server", "how", d.how, "issuer", d.meta.Issuer)
	return d, s.chooseScopes(d, ch), nil
}

// probe sends the server an MCP ping without a token, to read the
// challenge of its 401 (the resource_metadata URL and scope it names).
func (s *Session) probe(ctx context.Context) bearer {
	body := []byte(`{"jsonrpc":"2.0","id":"codemode-mcp-sign-in","method":"ping"}`)
	accept := http.Header{"Accept": {"application/json, text/event-stream"}}
	status, header, _, err := s.f.send(ctx, http.MethodPost, s.cfg.Server, "probe", "application/json", body, accept)
	if err != nil || status != http.StatusUnauthorized {
		return bearer{}
	}
	ch := bearerChallenge(header.Values("WWW-Authenticate"))
	if ch.found {
		s.mu.Lock()
		s.challenge = ch
		s.mu.Unlock()
	}
	return ch
}

// chooseScopes picks the scopes to ask for (the MCP specification's
// scope selection): the configured ones, else the challenge's scope, else
// the protected resource's scopes_supported, else none; plus those a 403
// insufficient_scope asked for; plus offline_access for a person's
// sign-in when the authorization server lists it (so that it grants a
// refresh token).
func (s *Session) chooseScopes(d *discovery, ch bearer) []string {
	base := s.cfg.Scopes
	if len(base) == 0 {
		base = ch.scopes
	}
	if len(base) == 0 {
		base = d.scopesSupported
	}
	s.mu.Lock()
	out := union(base, s.needScopes)
	s.mu.Unlock()
	out = s.boundScopes("the scopes to ask for", out)
	if s.cfg.Grant == GrantAuthorizationCode && slices.Contains(d.meta.ScopesSupported, "offline_access") {
		out = union(out, []string{"offline_access"})
	}
	return out
}

// Bounds of a list of scopes a server sent (scopes_supported, a
// challenge, a token answer), which is logged and sent in the
// authorization URL: only the 1 MiB bound of an answer held it before.
const (
	maxScopes     = 100
	maxScopeBytes = 256
)

// boundScopes returns scopes (named by what in the warning) without
// those longer than maxScopeBytes and those after the first maxScopes,
// with a warning when it dropped any.
func (s *Session) boundScopes(what string, scopes []string) []string {
	kept := scopes[:0:0]
	for _, sc := range scopes {
		if len(kept) < maxScopes && len(sc) <= maxScopeBytes {
			kept = append(kept, sc)
		}
	}
	if dropped := len(scopes) - len(kept); dropped > 0 {
		s.log.Warn("dropped scopes beyond the bound: "+what+" had more than "+strconv.Itoa(maxScopes)+" or some longer than "+strconv.Itoa(maxScopeBytes)+" bytes",
			"connector", s.cfg.Connector, "dropped", dropped)
		return kept
	}
	return scopes
}

// clientCredentials is the refresh of a client credentials session (see
// Session.refresh: concurrent callers share it): a token by the client
// credentials grant, stored, unless the session holds one that is not
// stale (the token the server refused), not due, and has the scopes
// needed (obtained while the caller waited). A client credentials token
// has no refresh token to protect, so processes do not lease it. The
// server's authorization is discovered for each token (once in its
// lifetime: a few requests), so that it follows the server's challenge.
func (s *Session) clientCredentials(ctx context.Context, stale string) (*grant, error) {
	s.mu.Lock()
	g, needScopes := s.cur, s.needScopes
	s.mu.Unlock()
	if g != nil && g.AccessToken != "" && g.AccessToken != stale && g.Refused == "" && !g.due(s.cfg.Now()) && covers(g.Scopes, needScopes) {
		return g, nil
	}
	d, scopes, err := s.discoverNow(ctx)
	if err != nil {
		return nil, s.errorf("%w", err)
	}
	auth, err := s.configuredAuth(d)
	if err != nil {
		return nil, err
	}
	form := tokenForm(GrantClientCredentials, d.resource, scopes)
	ng, err := s.obtain(ctx, "client credentials token", form, d, auth, scopes)
	if err != nil {
		return nil, err
	}
	s.log.Info("obtained a token by the client credentials grant", "scopes", strings.Join(ng.Scopes, " "), "expires", ng.Expiry)
	return ng, nil
}

// configuredAuth is the authentication of the configured client: by
// private_key_jwt with a key, else by its secret as the server supports.
func (s *Session) configuredAuth(d *discovery) (clientAuth, error) {
	a := clientAuth{id: s.cfg.ClientID, secret: s.cfg.ClientSecret, key: s.cfg.PrivateKey, audience: d.issuerOrEndpoint(), assertions: s.assertions}
	if a.key != nil {
		alg := jws.AlgOf(a.key.Public())
		if algs := d.meta.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, alg) {
			return a, s.errorf("the authorization server accepts client assertions signed with %s, not %s (the private key's algorithm)", strings.Join(algs, ", "), alg)
		}
		a.method = authPrivateJWT
		return a, nil
	}
	a.method = chooseAuthMethod(d.meta.TokenEndpointAuthMethodsSupported, a.secret != "")
	return a, nil
}

// clientFor finds the client to sign in as, in the specification's
// order: the configured one; a client ID metadata document when the
// server supports them; a registration (RFC 7591) made earlier with this
// authorization server for this redirect URI and these scopes, else a new
// one (BeginSignIn checked that one of them is there: cannotSignIn).
func (s *Session) clientFor(ctx context.Context, d *discovery, reg *registration, redirect string, scopes []string) (clientAuth, error) {
	if s.cfg.ClientID != "" {
		return s.configuredAuth(d)
	}
	if s.cfg.ClientMetadataURL != "" && d.meta.ClientIDMetadataDocumentSupported {
		return clientAuth{id: s.cfg.ClientMetadataURL, method: authNone}, nil
	}
	if reg != nil && reg.fits(redirect, scopes, s.cfg.Now()) {
		return reg.client(d), nil
	}
	nreg, err := s.register(ctx, d, redirect, scopes)
	if err != nil {
		return clientAuth{}, err
	}
	// In place of what is stored: a registration another process made
	// meanwhile is no better than ours.
	if err := s.vault.put(ctx, KindClient, regID(d), nreg); err != nil {
		s.log.Warn("keeping the client registration failed; the next sign-in registers again", "err", err)
	}
	return nreg.client(d), nil
}

// cannotSignIn says why a person cannot sign in with the authorization
// server d found, or "" when they can: it must support PKCE with S256,
// name an authorization endpoint, and give the client an identity (the
// configured client, a client ID metadata document it accepts, or a
// registration endpoint).
func (s *Session) cannotSignIn(d *discovery) string {
	as := redacted(d.issuerOrEndpoint())
	switch {
	case !d.pkceOK():
		return fmt.Sprintf("the authorization server %s does not say it supports PKCE with S256 (code_challenge_methods_supported); refusing to sign in", as)
	case d.meta.AuthorizationEndpoint == "":
		return fmt.Sprintf("the authorization server %s names no authorization endpoint", as)
	case s.cfg.ClientID != "", s.cfg.ClientMetadataURL != "" && d.meta.ClientIDMetadataDocumentSupported, d.meta.RegistrationEndpoint != "":
		return ""
	}
	why := "it offers no dynamic client registration"
	if s.cfg.ClientMetadataURL != "" {
		why += " and does not accept client ID metadata documents"
	}
	return fmt.Sprintf("cannot sign in with the authorization server %s: %s; configure oauth.client_id (and client_secret) for this connector", as, why)
}

// ErrNoSignIn is wrapped by the error of a request the server refused
// (401) without a token when it offers no sign-in a person could make:
// the server wants a credential of its own (a static token in a header),
// or its OAuth is one this client cannot use. It is not a
// *connectors.SignInRequired: nothing waits for a sign-in that cannot
// happen.
var ErrNoSignIn = errors.New("the server refused the request and offers no OAuth sign-in this client can use")

// signInOffered decides, at the server's first 401 to a request without
// a token, whether a person could sign in, before anything waits for
// them to: it discovers the server's authorization (as a sign-in would)
// and checks what cannotSignIn checks. A server that publishes no OAuth
// metadata at all is taken for a 2025-03-26 one with the default
// endpoints only if something answers at its /authorize (anything but
// 401, 403, 404, 405 or 410: a real authorization endpoint asked nothing
// answers 400 or a page); a server that wants a static token answers no
// such thing. It returns nil when a person can sign in, else an error
// wrapping ErrNoSignIn that says why and what the 401 said (refusal).
func (s *Session) signInOffered(ctx context.Context, refusal string) error {
	said := ""
	if refusal != "" {
		said = "; the server said: " + refusal
	}
	d, _, err := s.discoverNow(ctx)
	if err != nil {
		return s.cfg.Scrubber.Error(s.errorf("%w (%w%s)", ErrNoSignIn, err, said))
	}
	if why := s.noSignIn(ctx, d); why != "" {
		return s.cfg.Scrubber.Error(s.errorf("%w (%s%s)", ErrNoSignIn, why, said))
	}
	return nil
}

// noSignIn says why a person cannot sign in with what discovery found
// (d), or "" when they can: cannotSignIn's checks, and for the 2025-03-26
// default endpoints, something answering a GET of the authorization
// endpoint (see signInOffered).
func (s *Session) noSignIn(ctx context.Context, d *discovery) string {
	if !d.defaults {
		return s.cannotSignIn(d)
	}
	status, _, _, err := s.f.send(ctx, http.MethodGet, d.meta.AuthorizationEndpoint, "authorization endpoint", "", nil, http.Header{"Accept": {"text/html"}})
	switch {
	case err != nil, status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusNotFound,
		status == http.StatusMethodNotAllowed, status == http.StatusGone:
		return "it publishes no OAuth metadata (RFC 9728 or RFC 8414), and nothing answers at " + redacted(d.meta.AuthorizationEndpoint)
	}
	return s.cannotSignIn(d)
}

// issuerOrEndpoint names the authorization server: its issuer, or its
// token endpoint when it published no metadata (the audience of a client
// assertion; redacted, its name in messages).
func (d *discovery) issuerOrEndpoint() string { return cmp.Or(d.meta.Issuer, d.meta.TokenEndpoint) }

// BeginSignIn starts a sign-in (the authorization code flow with PKCE
// through a loopback redirect, RFC 8252): it discovers the authorization
// server, finds the client (registering one if need be), listens on
// 127.0.0.1 and returns the attempt, whose URL a person opens. The
// attempt ends when the browser comes back to the listener (the code is
// exchanged for tokens, which are stored), when SignInTimeout passes, or
// at Close.
func (s *Session) BeginSignIn(ctx context.Context) (*Attempt, error) {
	switch s.cfg.Grant {
	case GrantClientCredentials:
		return nil, fmt.Errorf("connector %s uses the client_credentials grant: it needs no sign-in", s.cfg.Connector)
	case GrantTokenExchange:
		return nil, fmt.Errorf("connector %s trades the person's own token for the server's (token exchange): there is no sign-in; %s resumes the run to lend it", s.cfg.Connector, s.cfg.Account)
	}
	d, scopes, err := s.discoverNow(ctx)
	if err != nil {
		return nil, s.errorf("%w", err)
	}
	if why := s.noSignIn(ctx, d); why != "" {
		return nil, s.errorf("%w (%s)", ErrNoSignIn, why)
	}
	var reg *registration
	if s.cfg.ClientID == "" && d.meta.RegistrationEndpoint != "" {
		reg = s.loadRegistration(ctx, d)
	}
	ln, err := listenLoopback(reg)
	if err != nil {
		return nil, s.errorf("listen for the sign-in's redirect: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath)
	c, err := s.clientFor(ctx, d, reg, redirect, scopes)
	if err != nil {
		ln.Close()
		return nil, err
	}
	verifier, state := randomString(32), randomString(24)
	secrets := s.cfg.Scrubber.Slot()
	secrets.Set(verifier, state)
	// (The endpoint parses: discovery checked it, checkURLs.)
	au, _ := AuthorizationURL(d.meta.AuthorizationEndpoint, c.id, redirect, state, verifier, "resource", d.resource, "scope", strings.Join(scopes, " "))
	a := &Attempt{s: s, url: au, redirect: redirect, state: state, verifier: verifier, secrets: secrets,
		d: d, client: c, scopes: scopes, done: make(chan struct{})}
	a.ctx, a.cancel = context.WithTimeout(s.ctx, s.cfg.SignInTimeout)
	a.stopTimer = context.AfterFunc(a.ctx, func() {
		a.finish(s.errorf("the sign-in did not complete within %v", s.cfg.SignInTimeout))
	})
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	a.serving.Go(func() { _ = a.srv.Serve(ln) })
	s.log.Info("sign-in started", "connector", s.cfg.Connector, "authorization_server", redacted(d.issuerOrEndpoint()), "scopes", strings.Join(scopes, " "), "redirect", redirect)
	return a, nil
}

// listenLoopback listens on 127.0.0.1: on the port of the registration's
// redirect URI when it is free (authorization servers that do not let
// loopback redirects change port keep working), else on a random port.
func listenLoopback(reg *registration) (net.Listener, error) {
	if reg != nil {
		for _, r := range reg.RedirectURIs {
			// (url.Parse takes only digits for a port.)
			if u, err := url.Parse(r); err == nil && u.Hostname() == "127.0.0.1" && strings.Trim(u.Port(), "0") != "" {
				if ln, err := net.Listen("tcp", u.Host); err == nil {
					return ln, nil
				}
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// An Attempt is one sign-in under way: a loopback listener waiting for the
// browser's redirect. It implements connectors.SignInAttempt.
type Attempt struct {
	// fixed at creation
	s                         *Session
	url                       string
	redirect, state, verifier string
	// secrets holds the verifier, the state and the code in the scrubber
	// until Close forgets them: they are good for this sign-in only.
	secrets   *scrub.Slot
	d         *discovery
	client    clientAuth
	scopes    []string
	srv       *http.Server
	serving   sync.WaitGroup
	ctx       context.Context // bounds the attempt
	cancel    context.CancelFunc
	stopTimer func() bool

	used       atomic.Bool // the redirect came (state checked): one use
	done       chan struct{}
	finishOnce sync.Once
	err        error // set before done closes
}

var _ connectors.SignInAttempt = (*Attempt)(nil)

// URL is the authorization request to open in a browser: it holds the
// PKCE challenge and the state, never the verifier or a secret.
func (a *Attempt) URL() string { return a.url }

// Wait blocks until the sign-in completed (nil: the tokens are stored),
// failed, or ctx ended.
func (a *Attempt) Wait(ctx context.Context) error {
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the attempt: the listener closes, and a redirect being
// answered stops exchanging its code and is waited for, its page written
// (a connection that sends no request is cut after closeGrace). It is
// safe to call more than once.
func (a *Attempt) Close() error {
	a.stopTimer()
	a.finish(a.s.errorf("the sign-in was abandoned"))
	a.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	if a.srv.Shutdown(ctx) != nil {
		_ = a.srv.Close()
	}
	a.serving.Wait()
	a.secrets.Forget()
	return nil
}

func (a *Attempt) finish(err error) {
	a.finishOnce.Do(func() {
		a.err = err
		if a.s.cfg.OnSignInEnded != nil {
			a.s.cfg.OnSignInEnded(err) // before Wait returns
		}
		close(a.done)
	})
}

// ServeHTTP answers the browser's redirect: it checks the state (a
// redirect with another state is refused and the attempt goes on), takes
// the redirect once, checks iss (RFC 9207), exchanges the code and stores
// the tokens, and tells the person the outcome, never a token.
func (a *Attempt) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != callbackPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(a.state)) != 1 {
		a.s.wrongStates.Warn(a.s.log, "a sign-in redirect came with a state this sign-in did not send; refused", "connector", a.s.cfg.Connector)
		page(w, http.StatusBadRequest, "This link is not the sign-in codemode-mcp is waiting for", "Start the sign-in again from codemode-mcp.")
		return
	}
	if !a.used.CompareAndSwap(false, true) {
		page(w, http.StatusConflict, "This sign-in has already ended", "Start a new one from codemode-mcp if you need to.")
		return
	}
	err := a.complete(q)
	a.finish(err)
	if err != nil {
		a.s.log.Warn("sign-in failed", "connector", a.s.cfg.Connector, "err", err)
		page(w, http.StatusBadRequest, "Sign-in failed", a.s.cfg.Scrubber.String(err.Error()))
		return
	}
	page(w, http.StatusOK, "Signed in", "codemode-mcp is signed in to "+a.s.cfg.Connector+". You can close this tab.")
}

// complete checks the redirect's parameters, exchanges the code and
// stores the grant.
func (a *Attempt) complete(q url.Values) error {
	s, d := a.s, a.d
	code, err := RedirectCode(q, d.meta)
	if err != nil {
		return s.errorf("%w", err)
	}
	a.secrets.Set(a.verifier, a.state, code)
	form := tokenForm(GrantAuthorizationCode, d.resource, nil, "code", code, "redirect_uri", a.redirect, "code_verifier", a.verifier)
	g, err := s.obtain(a.ctx, "exchanging the code", form, d, a.client, a.scopes)
	if err != nil {
		var oe *oauthError
		if a.client.regID != "" && errors.As(err, &oe) && oe.code == "invalid_client" {
			s.forgetRegistration(a.ctx, a.client.regID)
		}
		return err
	}
	s.mu.Lock()
	if covers(g.Scopes, s.needScopes) {
		s.needScopes = nil
	}
	s.mu.Unlock()
	s.log.Info("signed in", "connector", s.cfg.Connector, "scopes", strings.Join(g.Scopes, " "), "expires", g.Expiry, "refresh_token", g.RefreshToken != "")
	return nil
}

// page writes the loopback listener's answer: a small HTML page, with
// nothing fetched from elsewhere and no referrer sent on.
func page(w http.ResponseWriter, status int, title, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><title>codemode-mcp: %s</title>`+
		`<body style="font-family:system-ui,sans-serif;margin:3em auto;max-width:36em"><h1>%s</h1><p>%s</p></body>`,
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
