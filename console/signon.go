package console

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/evict"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// The paths of a sign-in through the issuer: where it starts, and where
// the issuer sends the browser back (the redirect URI registered for the
// console's client, server.auth.console).
const (
	signOnPath   = "/auth/login"
	callbackPath = "/auth/callback"
)

// Bounds of the sign-ins under way: at most maxAttempts (the oldest goes
// first), each for attemptTTL, and at most maxClientAttempts of one client
// address (its oldest goes first): anyone can start a sign-in (a GET), and
// one address doing so in a loop must not push out the sign-ins of others.
const (
	maxAttempts       = 256
	maxClientAttempts = 32
	attemptTTL        = 10 * time.Minute
)

// An attempt is one sign-in under way: what the console sent the issuer
// (state, nonce, PKCE verifier), the browser it is bound to (the value of
// its sign-in cookie), and where the person was going.
type attempt struct {
	state, nonce, verifier string
	browser                string
	next                   string
	client                 netip.Prefix // whose (throttle.Client)
	created                time.Time
}

// signOnCookie is the name of the cookie that binds a sign-in to the
// browser that started it. It is SameSite=Lax: the issuer's redirect back
// is a navigation from another site, which a Strict cookie would not
// follow.
func signOnCookie(r *http.Request) string { return cookieName(r) + "_signin" }

// beginSignOn starts a sign-in through the issuer: it keeps a new attempt
// (a random state, nonce and verifier), binds it to this browser with a
// cookie, and sends the browser to the issuer's authorization endpoint.
func (c *Console) beginSignOn(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if c.tooMany(w, r, next, "failed sign-ins") {
		return
	}
	a := &attempt{state: randomToken(), nonce: randomToken(), verifier: randomToken(), browser: randomToken(), next: next,
		client: throttle.Client(r.RemoteAddr), created: c.auth.now()}
	link, err := c.signOn.AuthorizationURL(r.Context(), a.state, a.nonce, a.verifier)
	if err != nil {
		c.log.Error("console: cannot start a sign-in through the issuer", "err", err)
		c.loginPage(w, r, http.StatusBadGateway, next, "The sign-in could not start: the issuer could not be asked (details in the server log). Try again.")
		return
	}
	c.auth.addAttempt(a)
	setCookie(w, r, signOnCookie(r), a.browser, int(attemptTTL/time.Second), http.SameSiteLaxMode)
	http.Redirect(w, r, link, http.StatusSeeOther)
}

// finishSignOn completes a sign-in from the issuer's redirect back. The
// attempt is found by its state and taken (one use: a replayed redirect
// finds none), and must be this browser's (its sign-in cookie); the
// issuer's answer is checked by the SignOn (iss, the code's exchange, the
// ID token and its nonce, the access token). A person whose token grants
// neither codemode:run nor codemode:approve is refused. Failures count
// against the client's address, as wrong tokens do. On success the
// browser gets a new session, the sign-in is audited, and a page sends it
// on to where it was going.
func (c *Console) finishSignOn(w http.ResponseWriter, r *http.Request) {
	if c.tooMany(w, r, "/", "failed sign-ins") {
		return
	}
	fail := func(status int, why, msg string) {
		c.auth.failures.Fail(r.RemoteAddr)
		c.auth.failures.Warn(c.log, "console: a sign-in through the issuer failed", "remote", r.RemoteAddr, "why", why)
		c.loginPage(w, r, status, "/", msg)
	}
	q := r.URL.Query()
	a := c.auth.takeAttempt(q.Get("state"))
	if a == nil {
		fail(http.StatusBadRequest, "unknown state", "This sign-in is not one the console is waiting for (it was used already, it expired, or it did not start here). Sign in again.")
		return
	}
	ck, err := r.Cookie(signOnCookie(r))
	if err != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(a.browser)) != 1 {
		fail(http.StatusBadRequest, "the sign-in started in another browser", "This sign-in started in another browser (or its cookie was lost). Sign in again from this one.")
		return
	}
	setCookie(w, r, signOnCookie(r), "", -1, http.SameSiteLaxMode)
	who, until, err := c.signOn.SignIn(r.Context(), q, a.nonce, a.verifier)
	switch {
	case codemode.IsRefusal(err):
		fail(http.StatusBadRequest, err.Error(), "The sign-in failed: "+err.Error()+". Sign in again.")
		return
	case err != nil:
		// Not the person's doing: not counted against their address.
		c.log.Error("console: cannot complete a sign-in: the issuer could not be asked", "err", err)
		c.loginPage(w, r, http.StatusBadGateway, "/", "The sign-in could not be completed: the issuer could not be asked (details in the server log). Sign in again.")
		return
	}
	ctx := codemode.WithSource(codemode.WithPrincipal(r.Context(), who), codemode.SourceConsole)
	if !who.HasScope(codemode.ScopeRun) && !who.HasScope(codemode.ScopeApprove) {
		why := fmt.Errorf("%s signed in without the scope %s or %s, one of which the console needs: %w", who.Display(), codemode.ScopeRun, codemode.ScopeApprove, codemode.ErrNotAllowed)
		c.eng.AuditSession(ctx, codemode.AuditLogin, why)
		c.log.Warn("console: a sign-in refused", "subject", who.Subject, "why", why)
		c.loginPage(w, r, http.StatusForbidden, "/", "Signed in as "+who.Display()+", but the issuer granted neither "+codemode.ScopeRun+" nor "+codemode.ScopeApprove+": ask whoever runs it for one.")
		return
	}
	s := c.startSession(w, r, who, until)
	c.eng.AuditSession(ctx, codemode.AuditLogin, nil)
	c.log.Info("console: signed in", "subject", who.Subject, "until", s.expires)
	// A page sends the browser on, rather than a redirect: the session
	// cookie is SameSite=Strict, and a redirect chain that began on the
	// issuer's site would not carry it.
	r = r.WithContext(ctx)
	c.render(w, r, http.StatusOK, "signedin", &page{Title: "Signed in", Next: a.next, Refresh: "0; url=" + a.next})
}

// addAttempt keeps a sign-in under way, dropping expired ones and, past
// maxClientAttempts of its client or maxAttempts in all, the oldest.
func (a *auth) addAttempt(at *attempt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	created := func(old *attempt) time.Time { return old.created }
	evict.MakeRoom(a.attempts, maxAttempts, func(old *attempt) bool { return now.Sub(old.created) >= attemptTTL }, created)
	evict.MakeRoomAmong(a.attempts, maxClientAttempts, func(old *attempt) bool { return old.client == at.client }, created)
	a.attempts[at.state] = at
}

// takeAttempt returns and forgets the live attempt of state, or nil.
func (a *auth) takeAttempt(state string) *attempt {
	if state == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	at := a.attempts[state]
	delete(a.attempts, state)
	if at == nil || a.now().Sub(at.created) >= attemptTTL {
		return nil
	}
	return at
}

// needs serves h to a person signed in with scope (in a console without
// sign-on, to everyone), else answers 403 saying so. The scopes are the
// MCP tools' (server.ToolScopes): codemode:run for one's runs and the
// snippets, codemode:approve to approve or reject, codemode:admin to roll
// back.
func (c *Console) needs(scope string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if who := codemode.PrincipalFrom(r.Context()); who != nil && !who.HasScope(scope) {
			c.refuse(w, r, http.StatusForbidden, fmt.Sprintf("%s signed in without the scope %s, which this needs: ask whoever runs the issuer for it.", who.Display(), scope))
			return
		}
		h(w, r)
	}
}
