package console

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/evict"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// maxSessions bounds the sessions kept. Those whose cookie never came
// back go first, then the oldest: a console without a token starts a
// session for every browser without one, so any web page can make it
// start sessions (an image of its address is requested without the
// SameSite=Strict cookie), and those must not push out the session of a
// person using the console.
const maxSessions = 256

// maxForm bounds a form body (a rejection's reason is the largest field).
const maxForm = 64 << 10

// auth keeps the sessions of one console. Sessions live in memory: a
// restart logs everyone out.
type auth struct {
	// fixed at creation
	token    [sha256.Size]byte
	hasToken bool
	now      func() time.Time   // time.Now; a test sets its own clock
	failures *throttle.Failures // wrong tokens per client address

	mu       sync.Mutex
	sessions map[string]*session // by cookie value; guarded by mu
	attempts map[string]*attempt // sign-ins under way, by state; guarded by mu
}

// session is one logged-in browser. Its fields other than flash and used
// are fixed at creation.
type session struct {
	id      string
	csrf    string
	expires time.Time
	created time.Time
	// who signed in through the issuer; nil in a console without one.
	who *codemode.Principal

	flash *flash // guarded by auth.mu
	used  bool   // its cookie came back (lookup); guarded by auth.mu
}

// flash is the outcome of a decision, shown once on the run's page after
// the redirect that follows the decision; a brief one (a decision about
// another's run) only says the run's new status, on the list of pending
// actions.
type flash struct {
	verb    string
	outcome codemode.Outcome
	brief   bool
}

func newAuth(token string, failures *throttle.Failures) *auth {
	a := &auth{now: time.Now, failures: cmp.Or(failures, throttle.New(0, 0, nil)), sessions: map[string]*session{}, attempts: map[string]*attempt{}}
	if token != "" {
		a.token, a.hasToken = sha256.Sum256([]byte(token)), true
	}
	return a
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newSession starts a session (who's, when they signed in through the
// issuer, until the earlier of until and the session's lifetime), making
// room when there are maxSessions.
func (a *auth) newSession(who *codemode.Principal, until time.Time) *session {
	now := a.now()
	s := &session{id: randomToken(), csrf: randomToken(), created: now, expires: now.Add(sessionTTL), who: who}
	if !until.IsZero() && until.Before(s.expires) {
		s.expires = until
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	evict.MakeRoom(a.sessions, maxSessions, func(old *session) bool { return !now.Before(old.expires) }, func(old *session) time.Time {
		if !old.used {
			return time.Time{} // (before every used one)
		}
		return old.created
	})
	a.sessions[s.id] = s
	return s
}

// lookup returns the live session of a cookie value, or nil.
func (a *auth) lookup(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil
	}
	if !a.now().Before(s.expires) {
		delete(a.sessions, id)
		return nil
	}
	s.used = true
	return s
}

// end forgets the session of a cookie value.
func (a *auth) end(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, id)
}

func (a *auth) setFlash(s *session, f *flash) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.flash = f
}

// takeFlash returns the session's flash, for execution id (any brief one
// with id ""), once.
func (a *auth) takeFlash(s *session, id string) *flash {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := s.flash
	if f == nil || (id == "") != f.brief || (id != "" && f.outcome.ExecutionID != id) {
		return nil
	}
	s.flash = nil
	return f
}

// tokenMatches compares a typed token with the configured one in constant
// time (over hashes, so its length does not leak either).
func (a *auth) tokenMatches(typed string) bool {
	got := sha256.Sum256([]byte(typed))
	return subtle.ConstantTimeCompare(got[:], a.token[:]) == 1
}

// cookieName is the session cookie's name for a request: one per port
// (browsers send a host's cookies to every port of it, and a console and
// a server may run side by side), with the __Host- prefix under TLS.
func cookieName(r *http.Request) string {
	name := "codemode_console"
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		name += "_" + port
	}
	if r.TLS != nil {
		name = "__Host-" + name
	}
	return name
}

// setCookie sets (maxAge -1: clears) an HttpOnly cookie of the console's,
// Secure under TLS.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: r.TLS != nil, SameSite: sameSite})
}

// startSession starts a session for the browser of r (who's, until:
// newSession) in place of the one it has, if any (a login gets a new
// session id), and sets its cookie.
func (c *Console) startSession(w http.ResponseWriter, r *http.Request, who *codemode.Principal, until time.Time) *session {
	if ck, err := r.Cookie(cookieName(r)); err == nil {
		c.auth.end(ck.Value)
	}
	s := c.auth.newSession(who, until)
	setCookie(w, r, cookieName(r), s.id, max(1, int(s.expires.Sub(c.auth.now())/time.Second)), http.SameSiteStrictMode)
	return s
}

type sessionKey struct{}

// sessionOf returns the request's session (set by authenticate).
func sessionOf(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	return s
}

// authenticate finds the request's session and, for a POST, checks its
// CSRF token. Without a token or a sign-on configured, a browser without a
// session gets one. Under a sign-on it serves the sign-in's own two paths
// (signon.go). It answers the request itself (login form, 401, 403) and
// returns false when the request goes no further. The request it returns
// carries the session, SourceConsole, and who acts: the person signed in
// through the issuer, else the console's local person.
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var s *session
	if ck, err := r.Cookie(cookieName(r)); err == nil {
		s = c.auth.lookup(ck.Value)
	}
	so := c.signOn != nil
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case so && r.URL.Path == signOnPath && get:
		c.beginSignOn(w, r)
		return r, false
	case so && r.URL.Path == callbackPath && get:
		c.finishSignOn(w, r)
		return r, false
	case !so && r.URL.Path == "/login" && r.Method == http.MethodPost && c.auth.hasToken:
		c.login(w, r)
		return r, false
	}
	if s == nil && (c.auth.hasToken || so) {
		switch {
		case r.URL.Path == "/login" && get:
			c.loginPage(w, r, http.StatusOK, "/", "")
		case strings.HasPrefix(r.URL.Path, "/api/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"log in to the console first"}` + "\n"))
		case get:
			c.loginPage(w, r, http.StatusUnauthorized, r.URL.RequestURI(), "")
		default:
			c.loginPage(w, r, http.StatusUnauthorized, "/", "Your session has ended: log in again, then repeat what you were doing.")
		}
		return r, false
	}
	if s == nil {
		s = c.startSession(w, r, nil, time.Time{})
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			c.refuse(w, r, http.StatusBadRequest, "The form could not be read: "+err.Error())
			return r, false
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			c.refuse(w, r, http.StatusForbidden, "This form is out of date or did not come from the console (its CSRF token does not match your session). Reload the page and try again.")
			return r, false
		}
	}
	ctx := codemode.WithSource(context.WithValue(r.Context(), sessionKey{}, s), codemode.SourceConsole)
	if s.who != nil {
		ctx = codemode.WithPrincipal(ctx, s.who)
	} else if !c.local.IsZero() {
		ctx = codemode.WithPerson(ctx, c.local)
	}
	return r.WithContext(ctx), true
}

// login checks the typed token; right, it starts a session and sends the
// browser where it was going. A client address that typed too many wrong
// tokens is refused (429, Retry-After) before its token is looked at,
// until its limit lifts (throttle.Failures); wrong tokens and refusals are
// logged at a bounded rate.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		c.refuse(w, r, http.StatusBadRequest, "The form could not be read: "+err.Error())
		return
	}
	next := localPath(r.PostForm.Get("next"))
	if c.tooMany(w, r, next, "wrong tokens") {
		return
	}
	if !c.auth.tokenMatches(r.PostForm.Get("token")) {
		c.auth.failures.Fail(r.RemoteAddr)
		c.auth.failures.Warn(c.log, "console: a login with a wrong token", "remote", r.RemoteAddr)
		c.loginPage(w, r, http.StatusUnauthorized, next, "That is not the token. It is the server's auth_token or CODEMODE_TOKEN (or the one codemode-mcp console printed when it started).")
		return
	}
	c.startSession(w, r, nil, time.Time{})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// tooMany answers a login or sign-in from an address that failed too
// often (throttle.Failures; failed says at what) with 429, Retry-After
// and the login page saying when to try again (next: its destination),
// logged at a bounded rate, and reports whether it did.
func (c *Console) tooMany(w http.ResponseWriter, r *http.Request, next, failed string) bool {
	ok, secs := c.auth.failures.Allow(r.RemoteAddr)
	if !ok {
		c.auth.failures.Warn(c.log, "console: refused: too many "+failed+" from this address", "remote", r.RemoteAddr, "retryAfter", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		c.loginPage(w, r, http.StatusTooManyRequests, next, fmt.Sprintf("Too many %s from your address: try again in %d s.", failed, secs))
	}
	return !ok
}

// logout ends the session (a person signed in through the issuer: audited).
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	c.auth.end(s.id)
	if s.who != nil {
		c.eng.AuditSession(r.Context(), codemode.AuditLogout, nil)
		c.log.Info("console: signed out", "subject", s.who.Subject)
	}
	setCookie(w, r, cookieName(r), "", -1, http.SameSiteStrictMode)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// localPath returns p when it is a path on this server, else "/": the
// login form's next never leads elsewhere. A path with a control
// character (a tab, a newline) or another character a person cannot see
// for what it is (visible.Hidden) is refused too: browsers drop tabs and
// newlines from URLs ("/\t/evil.example" is "//evil.example" to them), and
// no page of the console has such a path.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsFunc(p, visible.Hidden) {
		return "/"
	}
	return p
}
