// Package console is the approval console: a web page where a person sees
// what programs want to do and approves, rejects or rolls back their runs.
// It is served by `serve --transport http|sse` beside the MCP endpoints
// and by `codemode-mcp console` for deployments whose clients use stdio;
// server/ puts it behind the same Host check as the MCP endpoints.
//
// It is Go templates and a little plain JavaScript, embedded: no build
// step, nothing fetched from elsewhere, usable without JavaScript (the
// script only refreshes the page when runs change, never moving what is
// under the pointer, and asks before a rollback). A run's log is read a
// page at a time, with long values cut in the store (view.go's bounds).
//
// Security, in the order a request meets it:
//
//   - every response forbids framing (X-Frame-Options, frame-ancestors),
//     sends no Referer, and carries a Content-Security-Policy that allows
//     only this origin's script and style (no inline script);
//   - a state-changing request from another origin is refused
//     (http.CrossOriginProtection: Sec-Fetch-Site, else Origin against
//     Host);
//   - when a token is configured, nothing but the login form and the
//     static assets is served without a session: a page answers the
//     login form with 401, the JSON endpoint a bare 401. Logging in with
//     the token sets an HttpOnly, SameSite=Strict session cookie (Secure,
//     and __Host- prefixed, under TLS); the token never appears in a URL;
//   - every POST carries the session's CSRF token;
//   - a decision carries the digest of the pending actions shown
//     (codemode.PendingDigest) and the runtime refuses it when they
//     changed;
//   - everything from a program, a connector or a downstream is escaped
//     by html/template, and hidden characters (controls, bidirectional
//     overrides, zero-width characters) are shown as marked escapes
//     (package visible).
package console

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// Engine is what the console needs of the durable runtime; package
// runtime's *Runtime implements it. Decisions go through the same methods
// as the MCP tools and the command line. Its methods must be safe for
// concurrent use; errors that codemode.IsRefusal reports are shown to the
// person, others are internal failures.
type Engine interface {
	// Executions lists runs newest first.
	Executions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error)
	// ExecutionLog returns one run and the part of its log q selects,
	// values cut as q says (codemode.ClippedEntry).
	ExecutionLog(ctx context.Context, id string, q codemode.LogQuery) (*codemode.Execution, []codemode.ClippedEntry, error)
	// Snippets lists the saved snippets by name.
	Snippets(ctx context.Context) ([]codemode.Snippet, error)
	// Snippet returns the saved snippet called name;
	// codemode.ErrUnknownSnippet if there is none.
	Snippet(ctx context.Context, name string) (*codemode.Snippet, error)
	// SnippetStamps lists the saved snippets by name with only their
	// Name and CreatedAt (when each was last saved).
	SnippetStamps(ctx context.Context) ([]codemode.Snippet, error)
	// Resume approves a paused run's pending actions if they are still
	// the ones rv.Digest names. A run started as a task goes on in the
	// background (the outcome is running); any other resumes within the
	// call.
	Resume(ctx context.Context, id string, rv codemode.Review) (codemode.Outcome, error)
	// RejectReviewed rejects a paused run (seq > 0: that action) if its
	// pending actions are still the ones rv.Digest names.
	RejectReviewed(ctx context.Context, id string, seq int, rv codemode.Review) (codemode.Outcome, error)
	// Rollback reverts a run's applied, revertible calls, newest first.
	Rollback(ctx context.Context, id string) (codemode.Outcome, error)
	// Method describes a connector method as served now.
	Method(connector, method string, args json.RawMessage) codemode.MethodInfo
	// SignInPage starts (or finds under way) a person's sign-in to
	// connector and returns the page they open to sign in and until when
	// the engine waits for it; once they have signed in, the engine
	// resumes every run awaiting it.
	SignInPage(ctx context.Context, connector string) (link string, until time.Time, err error)
	// Pending lists the pending actions of every paused run (id "") that
	// the person ctx carries is shown: of their own runs, and, as an
	// approver, of others' (each with its run's starter).
	Pending(ctx context.Context, id string) ([]codemode.PendingAction, error)
	// AuditSession records a sign-in to the console, a sign-out, or (with
	// refused) a sign-in refused, by the person ctx carries.
	AuditSession(ctx context.Context, action codemode.AuditAction, refused error)
}

// A SignOn signs people in through the team's issuer (server.auth.console;
// internal/resource's SignOn): the console keeps each attempt's state,
// nonce and PKCE verifier, and the session of whoever signed in. Its
// methods must be safe for concurrent use.
type SignOn interface {
	// AuthorizationURL is where a browser goes to sign in, for an attempt
	// with state, nonce and verifier (whose S256 challenge it carries).
	AuthorizationURL(ctx context.Context, state, nonce, verifier string) (string, error)
	// SignIn completes the attempt that sent nonce and verifier from the
	// redirect back (its query; the console checked its state) and
	// returns who signed in and until when the sign-in holds. An error
	// codemode.IsRefusal reports is a sign-in refused (the person must
	// sign in again); any other, a failure to reach the issuer.
	SignIn(ctx context.Context, callback url.Values, nonce, verifier string) (*codemode.Principal, time.Time, error)
}

// Options configure a Console.
type Options struct {
	Engine Engine
	// Token, when set, is what a person types to log in (the server's
	// auth_token). Without one (and without a SignOn) the console is open
	// to whoever reaches it (loopback, as the MCP endpoints are then).
	Token string
	// Local is who decides in a console without a SignOn (codemode-mcp
	// console: local with the operating system's user name, as the
	// command line records); zero: codemode.Local.
	Local codemode.Person
	// Failures limits wrong tokens typed at the login per client address
	// (429 past its limit) and the log lines about them; share the MCP
	// server's (server.Options.AuthFailures) so that both count against
	// the same addresses. nil: one of the console's own with throttle's
	// defaults.
	Failures *throttle.Failures
	Logger   *slog.Logger
}

// sessionTTL is how long a login lasts.
const sessionTTL = 12 * time.Hour

// Console serves the approval console. It is an http.Handler.
type Console struct {
	// fixed at creation
	eng    Engine
	log    *slog.Logger
	local  codemode.Person
	auth   *auth
	pages  map[string]*template.Template
	static http.Handler
	mux    *http.ServeMux

	// set by SignInThrough before the console serves (nil: no sign-on)
	signOn SignOn
	issuer string
}

// SignInThrough makes the console sign people in through the issuer (so)
// in place of a token: each session is then one person's, and what they
// see and decide is theirs under the policy. The server calls it once it
// knows its public URL (the redirect URI's origin), before it serves the
// console; issuer names the issuer on the sign-in page.
func (c *Console) SignInThrough(so SignOn, issuer string) {
	c.signOn, c.issuer = so, issuer
}

//go:embed templates/*.html static/*
var assets embed.FS

// New builds a console over opts.Engine.
func New(opts Options) *Console {
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	c := &Console{
		eng:    opts.Engine,
		log:    opts.Logger,
		local:  opts.Local,
		auth:   newAuth(opts.Token, opts.Failures),
		pages:  parsePages(),
		static: http.FileServerFS(assets), // (at publicAssets only)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.pendingPage)
	mux.HandleFunc("GET /runs", c.needs(codemode.ScopeRun, c.runsPage))
	mux.HandleFunc("GET /runs/{id}", c.needs(codemode.ScopeRun, func(w http.ResponseWriter, r *http.Request) {
		c.showRun(w, r, r.PathValue("id"), http.StatusOK, "")
	}))
	mux.HandleFunc("GET /runs/{id}/value", c.needs(codemode.ScopeRun, c.valuePage))
	mux.HandleFunc("POST /runs/{id}/approve", c.needs(codemode.ScopeApprove, c.review(false)))
	mux.HandleFunc("POST /runs/{id}/reject", c.needs(codemode.ScopeApprove, c.review(true)))
	mux.HandleFunc("POST /runs/{id}/rollback", c.needs(codemode.ScopeAdmin, func(w http.ResponseWriter, r *http.Request) {
		c.decide(w, r, "rolled back", c.eng.Rollback)
	}))
	mux.HandleFunc("POST /runs/{id}/signin", c.needs(codemode.ScopeRun, c.signIn))
	mux.HandleFunc("GET /snippets", c.needs(codemode.ScopeRun, c.snippetsPage))
	mux.HandleFunc("GET /snippets/{name}/code", c.needs(codemode.ScopeRun, c.snippetCode))
	mux.HandleFunc("GET /api/version", c.version)
	mux.HandleFunc("POST /logout", c.logout)
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusSeeOther) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.refuse(w, r, http.StatusNotFound, "There is no page at this address.")
	})
	c.mux = mux
	return c
}

// ServeHTTP answers one request: the security headers, the cross-origin
// and session checks, then the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if publicAssets[r.URL.Path] {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		c.static.ServeHTTP(w, r)
		return
	}
	if err := crossOrigin.Check(r); err != nil {
		c.refuse(w, r, http.StatusForbidden, "This request came from another site or origin, so it was refused. Use the console's own buttons.")
		return
	}
	r, ok := c.authenticate(w, r)
	if !ok {
		return
	}
	c.mux.ServeHTTP(w, r)
}

// publicAssets are served without a session (the login page uses them):
// the same in every installation, they hold nothing of the store.
var publicAssets = map[string]bool{"/static/console.css": true, "/static/console.js": true, "/static/icon.svg": true}

// crossOrigin refuses state-changing requests that a browser marks as
// coming from another origin.
var crossOrigin = http.NewCrossOriginProtection()

// securityHeaders are set on every response.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
