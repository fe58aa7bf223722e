package oauth

import (
	"cmp"
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/throttle"
)

// Defaults of Config.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultSignInTimeout = 10 * time.Minute
)

// leaseTime is how long a process holds a grant while it refreshes it:
// longer than a token request may take (DefaultTimeout), so that no other
// process sends the same refresh token meanwhile.
const leaseTime = 2 * DefaultTimeout

// leasePoll is how often a process waiting for another's refresh looks at
// the store.
const leasePoll = 25 * time.Millisecond

// maxRefreshSkew is how long before its expiry a token is refreshed at the
// most; a short-lived token is refreshed when a quarter of its life is
// left.
const maxRefreshSkew = time.Minute

// maxStepUps bounds the sign-ins asked for in a row because the server
// answered 403 insufficient_scope: after the first sign-in and this many
// step-ups, the server is taken to never grant what it asks for.
const maxStepUps = 2

// Config configures a Session.
type Config struct {
	// Connector is the connector's name, for SignInRequired and messages.
	Connector string
	// Server is the remote MCP server's URL: the protected resource.
	Server string
	// Account, when set, is the person the session signs in for (their
	// subject at the team's issuer: credentials: per_user): the grant is
	// theirs alone, kept under an id that names them, so that one
	// person's tokens are never read for another. "" is the one grant
	// of the server (credentials: shared).
	Account string
	// Grant is GrantAuthorizationCode ("" too), GrantClientCredentials
	// or GrantTokenExchange (which needs an Account, a TokenEndpoint and
	// a ClientID).
	Grant string
	// TokenEndpoint is where GrantTokenExchange trades tokens (the
	// server's authorization server's token endpoint), and Audience the
	// RFC 8693 audience it asks for ("" for none: the resource, the
	// server's URL, is always sent).
	TokenEndpoint, Audience string
	// ClientID and ClientSecret are a client registered beforehand with
	// the authorization server; PrivateKey (see ParsePrivateKey)
	// authenticates it by private_key_jwt instead of a secret. ClientMetadataURL is the HTTPS URL of a Client ID Metadata
	// Document, the client id for servers that accept one. With none of
	// them the client registers itself (RFC 7591) where the server allows.
	ClientID, ClientSecret string
	ClientMetadataURL      string
	PrivateKey             crypto.Signer
	// Scopes, when set, are asked for instead of those the server
	// suggests.
	Scopes []string

	// Store keeps grants and registrations, sealed by Sealer.
	Store  Store
	Sealer *Sealer
	// Scrubber receives every token, code, verifier and client secret
	// before it is used.
	Scrubber *scrub.Scrubber
	// Logger receives the session's logs; nil means slog.Default().
	Logger *slog.Logger
	// Timeout bounds each request to the authorization server
	// (DefaultTimeout when zero); SignInTimeout bounds a sign-in, the wait
	// for the browser to come back (DefaultSignInTimeout).
	Timeout, SignInTimeout time.Duration
	// Now is the clock tokens expire by; nil means time.Now.
	Now func() time.Time
	// OnSignInEnded, when set, hears how each sign-in (BeginSignIn's
	// Attempt) ended: nil once the tokens are stored, else why not (it
	// failed, was abandoned or timed out). It must not block.
	OnSignInEnded func(err error)
}

// A Session is the OAuth client of one remote MCP server: it finds how the
// server is protected, signs in (or, for the client credentials grant,
// obtains tokens alone), keeps the grant in the store, and adds its access
// token to the connector's requests (Transport), refreshing it once across
// the processes that share the store. Its methods are safe for
// concurrent use. Close stops what it runs in the background.
type Session struct {
	// fixed at creation
	cfg    Config
	id     string   // the grant's record id: the server's URL without query
	server string   // the server's canonical URL
	su     *url.URL // the server's URL, whose origin alone gets the token
	f      *Fetcher
	vault  vault
	holder string // this session's name in a lease
	log    *slog.Logger
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	// refreshes shares a refresh among concurrent callers, exchanges a
	// token exchange (Exchange).
	refreshes *Flight[string]
	exchanges *Flight[struct{}]
	// tokens holds the adopted grant's tokens in the scrubber, subject the
	// last person's token exchanged, assertions the last private_key_jwt
	// assertions: each is replaced, not added to, so that refreshes do not
	// grow the scrubber (see scrub.Slot).
	tokens, subject, assertions *scrub.Slot
	// wrongStates bounds the rate of the lines about sign-in redirects with
	// a state no attempt sent: any local process can send them.
	wrongStates *throttle.Failures

	mu sync.Mutex
	// cur is the grant last read or written; loaded says the store was
	// read at least once.
	cur    *grant
	loaded bool
	// need, when set, is why a sign-in is needed, as far as this process
	// knows.
	need string
	// challenge is the server's last Bearer challenge (on a 401).
	challenge bearer
	// needScopes are scopes a 403 insufficient_scope asked for; stepUps
	// counts those answers since the last success.
	needScopes []string
	stepUps    int
	// scopeRefused is the access token a 403 insufficient_scope refused
	// last: it is not sent again, and its 403s count once.
	scopeRefused string
}

// errClosed is the error of a refresh or an exchange asked for after
// Close.
var errClosed = errors.New("the OAuth session is closed")

// grant is a server's stored grant.
type grant struct {
	Server             string    `json:"server"`
	Resource           string    `json:"resource"`
	Issuer             string    `json:"issuer,omitempty"`
	TokenEndpoint      string    `json:"token_endpoint"`
	RevocationEndpoint string    `json:"revocation_endpoint,omitempty"`
	ClientID           string    `json:"client_id"`
	ClientSecret       string    `json:"client_secret,omitempty"`
	AuthMethod         string    `json:"auth_method"`
	AccessToken        string    `json:"access_token,omitempty"`
	RefreshToken       string    `json:"refresh_token,omitempty"`
	Obtained           time.Time `json:"obtained"`
	Expiry             time.Time `json:"expiry,omitzero"`
	Scopes             []string  `json:"scopes,omitempty"`
	// Refused says why the tokens are no longer good (the server refused
	// them, or the refresh token); a sign-in is needed.
	Refused string `json:"refused,omitempty"`
	// Lease is held by the process refreshing the grant.
	Lease *lease `json:"lease,omitempty"`
}

type lease struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

// New returns a session for cfg.
func New(cfg Config) (*Session, error) {
	if cfg.Grant == "" {
		cfg.Grant = GrantAuthorizationCode
	}
	switch {
	case cfg.Grant != GrantAuthorizationCode && cfg.Grant != GrantClientCredentials && cfg.Grant != GrantTokenExchange:
		return nil, fmt.Errorf("grant %q: want %s, %s or %s", cfg.Grant, GrantAuthorizationCode, GrantClientCredentials, GrantTokenExchange)
	case cfg.Grant == GrantTokenExchange && (cfg.Account == "" || cfg.ClientID == "" || cfg.TokenEndpoint == ""):
		return nil, errors.New("token exchange needs the person (Account), a client_id and the token endpoint")
	case cfg.Grant == GrantClientCredentials && cfg.ClientID == "":
		return nil, errors.New("the client_credentials grant needs a client_id")
	case cfg.Grant == GrantClientCredentials && cfg.ClientSecret == "" && cfg.PrivateKey == nil:
		return nil, errors.New("the client_credentials grant needs a client_secret or a private_key")
	case cfg.Grant == GrantClientCredentials && cfg.Account != "":
		return nil, errors.New("the client_credentials grant has no person to sign in: it cannot hold per-user credentials")
	case cfg.Store == nil || cfg.Sealer == nil:
		return nil, errors.New("no store for tokens")
	}
	su, err := secureURL(cfg.Server, "the server URL")
	if err != nil {
		return nil, err
	}
	if cfg.TokenEndpoint != "" {
		if _, err := secureURL(cfg.TokenEndpoint, "the token endpoint"); err != nil {
			return nil, err
		}
	}
	if cfg.ClientMetadataURL != "" {
		u, err := url.Parse(cfg.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			return nil, fmt.Errorf("client_metadata_url %q: a client ID metadata document's URL must be https with a path", clip(cfg.ClientMetadataURL))
		}
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Scrubber = cmp.Or(cfg.Scrubber, scrub.New())
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.SignInTimeout = cmp.Or(cfg.SignInTimeout, DefaultSignInTimeout)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Scrubber.Add(cfg.ClientSecret)
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{
		cfg:    cfg,
		id:     grantID(cfg.Server, cfg.Account),
		server: canonicalURL(cfg.Server),
		su:     su,
		f:      NewFetcher(cfg.Timeout),
		vault:  vault{store: cfg.Store, seal: cfg.Sealer},
		holder: randomString(8),
		log:    cfg.Logger.With("oauth", redacted(cfg.Server)),
		ctx:    ctx,
		cancel: cancel,

		refreshes:  NewFlight[string](errClosed),
		exchanges:  NewFlight[struct{}](errClosed),
		tokens:     cfg.Scrubber.Slot(),
		subject:    cfg.Scrubber.Slot(),
		assertions: cfg.Scrubber.Slot(),

		wrongStates: throttle.New(0, 0, cfg.Now),
	}, nil
}

// grantID is the record id of account's grant of server: the server's
// canonical URL without query (which may hold a secret: ids are stored in
// the clear), then, for a person's grant, the account escaped after
// "#user=" (a fragment, which a server URL never has: canonicalURL drops
// it). The sealed value is bound to this id, so a grant copied to another
// person's id does not open.
func grantID(server, account string) string {
	u, _ := url.Parse(canonicalURL(server)) // server passed secureURL (New)
	u.RawQuery, u.ForceQuery = "", false
	if account == "" {
		return u.String()
	}
	return u.String() + "#user=" + url.QueryEscape(account)
}

// Close ends the refreshes and exchanges under way and waits for them.
func (s *Session) Close() error {
	s.cancel()
	s.refreshes.Close()
	s.exchanges.Close()
	s.f.Close()
	return nil
}

// errorf is an error of the connector: its name, then what format says.
func (s *Session) errorf(format string, a ...any) error {
	return fmt.Errorf("connector %s: %w", s.cfg.Connector, fmt.Errorf(format, a...))
}

// signInRequired is the error of a call that needs a person to sign in.
func (s *Session) signInRequired(reason string) error {
	return &connectors.SignInRequired{Connector: s.cfg.Connector, Reason: reason}
}

// needSignIn records why a sign-in is needed and returns the error. A
// client credentials session has no one to sign in: it reports the reason
// as a plain error and records nothing (its next request asks for a new
// token).
func (s *Session) needSignIn(reason string) error {
	if s.cfg.Grant == GrantClientCredentials {
		return s.errorf("%s (client credentials grant)", reason)
	}
	s.mu.Lock()
	s.need = reason
	s.mu.Unlock()
	return s.signInRequired(reason)
}

// load reads the stored grant (nil when there is none) and its stored
// form. A grant sealed with another key is reported as none, with a
// warning: it cannot be used; so is a grant of another server (the same
// id for another URL). (Another person's grant does not open: the id
// names the person, and the sealed value is bound to it.)
func (s *Session) load(ctx context.Context) (*grant, []byte, error) {
	var g grant
	raw, err := s.vault.load(ctx, KindGrant, s.id, &g)
	switch {
	case errors.Is(err, errOtherKey):
		s.log.Warn("the stored sign-in was sealed with another key; sign in again (or give every process the same "+EnvSecretKey+")", "err", err)
		return nil, raw, nil
	case err != nil || raw == nil:
		return nil, raw, err
	case g.Server != s.server:
		return nil, raw, nil
	}
	s.cfg.Scrubber.Add(g.ClientSecret) // a registration's: one per registration
	return &g, raw, nil
}

// reload reads the stored grant (another process may have signed in or
// refreshed) and adopts it.
func (s *Session) reload(ctx context.Context) (*grant, error) {
	g, _, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	s.adopt(g)
	return g, nil
}

// adopt makes g the session's current grant.
func (s *Session) adopt(g *grant) {
	if g != nil {
		s.tokens.Set(g.AccessToken, g.RefreshToken)
	} else {
		s.tokens.Set()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur, s.loaded = g, true
	if g != nil && g.usable() && covers(g.Scopes, s.needScopes) && (g.AccessToken == "" || g.AccessToken != s.scopeRefused) {
		s.need = ""
	}
}

// usable reports whether g has tokens nobody refused.
func (g *grant) usable() bool {
	return g.Refused == "" && (g.AccessToken != "" || g.RefreshToken != "")
}

// due reports whether g's access token is to be replaced at now.
func (g *grant) due(now time.Time) bool {
	if g.AccessToken == "" {
		return true
	}
	if g.Expiry.IsZero() {
		return false
	}
	skew := min(maxRefreshSkew, g.Expiry.Sub(g.Obtained)/4)
	return !now.Before(g.Expiry.Add(-skew))
}

// expired reports whether g holds no access token good at now: none, or
// one past its expiry. (A token that is only due may still be sent.)
func (g *grant) expired(now time.Time) bool {
	return g.AccessToken == "" || !g.Expiry.IsZero() && !now.Before(g.Expiry)
}

// covers reports whether have holds every scope of want.
func covers(have, want []string) bool {
	return !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(have, w) })
}

// union returns the scopes of a then those of b not in a.
func union(a []string, bs ...[]string) []string {
	out := slices.Clone(a)
	for _, b := range bs {
		for _, x := range b {
			if x != "" && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// accessToken returns the token to send: "" when there is none yet and
// none is known to be needed (the server's answer will say); an error
// wrapping *connectors.SignInRequired when a person must sign in first.
func (s *Session) accessToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	g, need, loaded := s.cur, s.need, s.loaded
	s.mu.Unlock()
	if !loaded || need != "" {
		// Another process may have signed in or refreshed: the store is
		// read again (a local read, nothing is sent). A server that wants
		// no token costs one read, not one a request.
		if _, err := s.reload(ctx); err != nil {
			return "", err
		}
		s.mu.Lock()
		g, need = s.cur, s.need
		s.mu.Unlock()
	}
	switch {
	case need != "":
		return "", s.signInRequired(need)
	case g == nil:
		return "", nil
	case g.Refused != "" && s.cfg.Grant == GrantClientCredentials:
		return "", nil // the server's 401 makes the session ask for a new one
	case g.Refused != "":
		return "", s.needSignIn(g.Refused)
	case !g.due(s.cfg.Now()):
		return g.AccessToken, nil
	}
	tok, err := s.refresh(ctx, "")
	if err == nil {
		return tok, nil
	}
	if _, ok := connectors.AsSignInRequired(err); !ok && g.AccessToken != "" && (g.Expiry.IsZero() || s.cfg.Now().Before(g.Expiry)) {
		// Refreshed early and failed: the token still works for now.
		s.log.Warn("refreshing the access token before it expires failed; using it until it does", "err", err, "expires", g.Expiry)
		return g.AccessToken, nil
	}
	return "", err
}

// refresh returns an access token that is neither stale (a token the
// server refused; "" for a token that is only due) nor due: one stored
// meanwhile by another process, or a new one from the token endpoint (for
// a client credentials session, a new token: clientCredentials).
// Concurrent callers share one refresh; processes sharing the store take
// a lease on the grant first, so that one refresh token is sent once
// (refreshShared).
func (s *Session) refresh(ctx context.Context, stale string) (string, error) {
	return s.refreshes.Do(ctx, func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, leaseTime+s.cfg.Timeout)
		defer cancel()
		refresh := s.refreshShared
		if s.cfg.Grant == GrantClientCredentials {
			refresh = s.clientCredentials
		}
		g, err := refresh(ctx, stale)
		if err != nil {
			return "", s.cfg.Scrubber.Error(err)
		}
		return g.AccessToken, nil
	})
}

// refreshShared refreshes under a lease in the store. It reads the grant;
// when another process refreshed it meanwhile, that is the answer; when
// another holds the lease, it reads it again every leasePoll; otherwise
// it swaps in a grant leased to itself (exactly one process wins that
// swap), sends the refresh, and swaps in the new tokens.
func (s *Session) refreshShared(ctx context.Context, stale string) (*grant, error) {
	for {
		g, raw, err := s.load(ctx)
		if err != nil {
			return nil, err
		}
		now := s.cfg.Now()
		switch {
		case g == nil:
			s.adopt(nil)
			return nil, s.needSignIn("not signed in yet")
		case g.Refused != "":
			s.adopt(g)
			return nil, s.needSignIn(g.Refused)
		case g.AccessToken != "" && g.AccessToken != stale && !g.due(now):
			s.adopt(g)
			return g, nil
		case g.Lease != nil && g.Lease.Holder != s.holder && now.Before(g.Lease.Until):
			// Another process refreshes it: look again shortly (until it
			// stored its tokens, or its lease lapsed: its holder died).
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for another process to refresh the token: %w", ctx.Err())
			case <-time.After(leasePoll):
			}
			continue
		case g.RefreshToken == "" && stale == "" && !g.expired(now):
			// Due, with nothing to renew it by here: it serves until it
			// expires (a token exchange session trades again when the
			// person's token is at hand: Exchange).
			s.adopt(g)
			return g, nil
		case g.RefreshToken == "" && s.cfg.Grant == GrantTokenExchange:
			// Nothing to refresh with: the person's own token is traded
			// again (Exchange), once at hand.
			return nil, s.refuse(ctx, g, raw, s.noSubjectToken())
		case g.RefreshToken == "" && stale != "":
			return nil, s.refuse(ctx, g, raw, "the server refused the access token, and gave no refresh token")
		case g.RefreshToken == "":
			return nil, s.refuse(ctx, g, raw, "the access token expired, and the server gave no refresh token")
		}
		leased := *g
		leased.Lease = &lease{Holder: s.holder, Until: now.Add(leaseTime)}
		lraw, ok, err := s.vault.swap(ctx, KindGrant, s.id, raw, &leased)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // changed meanwhile: look again
		}
		return s.renew(ctx, g, &leased, lraw)
	}
}

// renew sends the refresh of g (held under leased, stored as lraw) and
// stores its outcome: the new tokens, or the refusal, or g again without
// the lease when the endpoint could not be reached.
func (s *Session) renew(ctx context.Context, g, leased *grant, lraw []byte) (*grant, error) {
	// g may be another process's since this one adopted a grant: its
	// tokens go in the scrubber before they are sent (an answer may echo
	// them).
	s.tokens.Set(g.AccessToken, g.RefreshToken)
	if err := s.storedURL(g.TokenEndpoint, "the stored grant's token endpoint"); err != nil {
		return nil, s.refuse(ctx, leased, lraw, err.Error()+"; sign in again")
	}
	form := tokenForm("refresh_token", g.Resource, nil, "refresh_token", g.RefreshToken)
	t, err := s.f.requestTokens(ctx, g.TokenEndpoint, form, s.authFor(g), s.cfg.Scrubber, s.cfg.Now())
	if err != nil {
		if isInvalidGrant(err) {
			s.log.Warn("the authorization server refused the refresh token; a sign-in is needed", "err", err)
			return nil, s.refuse(ctx, leased, lraw, "the authorization server refused the refresh token ("+err.Error()+")")
		}
		// Not the grant's fault: give the lease back and say what happened.
		s.log.Warn("refreshing the access token failed", "err", err, "token_endpoint", redacted(g.TokenEndpoint))
		if _, _, rerr := s.vault.swap(ctx, KindGrant, s.id, lraw, g); rerr != nil {
			s.log.Warn("giving back the lease on the grant", "err", rerr)
		}
		return nil, fmt.Errorf("refreshing the access token: %w", err)
	}
	ng := *g
	ng.Lease, ng.Refused = nil, ""
	t.Scopes = s.boundScopes("the token endpoint's answer", t.Scopes)
	t.into(&ng, s.cfg.Now())
	_, ok, err := s.vault.swap(ctx, KindGrant, s.id, lraw, &ng)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The lease was broken (it lapsed while the request hung). Store
		// ours only if nobody refreshed since: a newer grant wins.
		cur, craw, err := s.load(ctx)
		if err == nil && cur != nil && cur.RefreshToken == g.RefreshToken {
			_, ok, err = s.vault.swap(ctx, KindGrant, s.id, craw, &ng)
		}
		if err != nil || !ok {
			s.log.Warn("the stored grant changed while this process refreshed it; using the new token in this process only")
		}
	}
	s.log.Debug("refreshed the access token", "expires", ng.Expiry, "rotated", t.RefreshToken != "" && t.RefreshToken != g.RefreshToken)
	s.adopt(&ng)
	return &ng, nil
}

// refuse stores that g's tokens are no longer good (so that every process
// asks for a sign-in) and returns the SignInRequired.
func (s *Session) refuse(ctx context.Context, g *grant, raw []byte, reason string) error {
	r := *g
	r.AccessToken, r.RefreshToken, r.Lease, r.Refused = "", "", nil, reason
	_, ok, err := s.vault.swap(ctx, KindGrant, s.id, raw, &r)
	if err != nil {
		s.log.Warn("recording that the server refused the tokens", "err", err)
	} else if ok {
		s.adopt(&r)
	}
	return s.needSignIn(reason)
}

// storedURL checks again an endpoint a stored grant keeps (what names it
// in the error) before a token or a secret is sent there, as discovery
// checks the endpoints a server names (namedURL): a grant stored before
// discovery refused plain http to this machine from a remote server keeps
// what it was given. The configured token endpoint (token exchange) is
// the operator's, checked by New.
func (s *Session) storedURL(raw, what string) error {
	if raw == s.cfg.TokenEndpoint {
		return nil
	}
	_, err := namedURL(raw, what, isLoopback(s.su.Hostname()))
	return err
}

// authFor is how the client of g authenticates: the configured secret or
// key when g's client is the configured one, else what g keeps.
func (s *Session) authFor(g *grant) clientAuth {
	a := clientAuth{id: g.ClientID, secret: g.ClientSecret, method: g.AuthMethod, audience: cmp.Or(g.Issuer, g.TokenEndpoint)}
	if g.ClientID == s.cfg.ClientID {
		a.secret, a.key, a.assertions = cmp.Or(s.cfg.ClientSecret, a.secret), s.cfg.PrivateKey, s.assertions
	}
	return a
}

// obtain sends the token request form (what it is for names it in the
// error) to d's token endpoint as auth's client, and stores the grant it
// brings as the server's, whatever was stored before: asked for scopes
// (the answer may name those granted), keeping the client's secret when
// the client is a registration (clientAuth.regID). The error is the
// connector's, scrubbed.
func (s *Session) obtain(ctx context.Context, what string, form url.Values, d *discovery, auth clientAuth, scopes []string) (*grant, error) {
	g := &grant{
		Server: s.server, Resource: d.resource, Issuer: d.meta.Issuer,
		TokenEndpoint: d.meta.TokenEndpoint, RevocationEndpoint: d.meta.RevocationEndpoint,
		ClientID: auth.id, AuthMethod: auth.method, Scopes: scopes,
	}
	if auth.regID != "" {
		g.ClientSecret = auth.secret
	}
	t, err := s.f.requestTokens(ctx, g.TokenEndpoint, form, auth, s.cfg.Scrubber, s.cfg.Now())
	if err != nil {
		return nil, s.cfg.Scrubber.Error(s.errorf("%s: %w", what, err))
	}
	t.Scopes = s.boundScopes("the token endpoint's answer", t.Scopes)
	t.into(g, s.cfg.Now())
	if err := s.vault.put(ctx, KindGrant, s.id, g); err != nil {
		return nil, s.errorf("store the grant: %w", err)
	}
	s.adopt(g)
	return g, nil
}

// NeedsSignIn implements connectors.SignIner: it reads the store (another
// process may have signed in) and reports whether a call would now need a
// sign-in. It sends nothing.
func (s *Session) NeedsSignIn(ctx context.Context) (*connectors.SignInRequired, error) {
	if s.cfg.Grant == GrantClientCredentials {
		return nil, nil
	}
	g, err := s.reload(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	need, needScopes, scopeRefused := s.need, s.needScopes, s.scopeRefused
	s.mu.Unlock()
	reason := ""
	switch {
	case s.cfg.Grant == GrantTokenExchange && (g == nil || !g.usable() || g.RefreshToken == "" && g.expired(s.cfg.Now())):
		reason = s.noSubjectToken()
	case g == nil:
		reason = need
	case g.Refused != "":
		reason = g.Refused
	case !covers(g.Scopes, needScopes), g.AccessToken != "" && g.AccessToken == scopeRefused:
		reason = "the server needs the scopes " + clip(strings.Join(needScopes, " "))
	case g.RefreshToken == "" && g.expired(s.cfg.Now()):
		reason = "the access token expired and the server gave no refresh token"
	}
	if reason == "" {
		return nil, nil
	}
	return &connectors.SignInRequired{Connector: s.cfg.Connector, Reason: reason}, nil
}

// Signed reports whether a grant with usable tokens is stored for the
// server (a sign-in happened and was not refused since).
func (s *Session) Signed(ctx context.Context) (bool, error) {
	g, _, err := s.load(ctx)
	return g != nil && g.usable(), err
}

// SignOut implements connectors.SignIner: it revokes the stored tokens
// where the authorization server offers revocation (RFC 7009; a failure
// is logged, not returned) and forgets them, whatever is stored by then.
func (s *Session) SignOut(ctx context.Context) error {
	g, _, err := s.load(ctx)
	if err != nil {
		return err
	}
	if g != nil {
		s.revoke(ctx, g)
	}
	if err := s.vault.put(ctx, KindGrant, s.id, nil); err != nil {
		return fmt.Errorf("forget the grant: %w", err)
	}
	s.mu.Lock()
	s.cur, s.need, s.needScopes, s.stepUps, s.scopeRefused = nil, "signed out", nil, 0, ""
	s.mu.Unlock()
	return nil
}

// revoke asks the authorization server to revoke g's tokens, refresh token
// first (which ends the grant on most servers).
func (s *Session) revoke(ctx context.Context, g *grant) {
	if g.RevocationEndpoint == "" {
		return
	}
	if err := s.storedURL(g.RevocationEndpoint, "the stored grant's revocation endpoint"); err != nil {
		s.log.Warn("not revoking the tokens; they are forgotten here all the same", "err", err)
		return
	}
	for _, t := range []struct{ tok, hint string }{{g.RefreshToken, "refresh_token"}, {g.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		form := url.Values{"token": {t.tok}, "token_type_hint": {t.hint}}
		status, _, _, err := s.f.postForm(ctx, g.RevocationEndpoint, "revocation request to", form, s.authFor(g), s.cfg.Scrubber, s.cfg.Now())
		switch {
		case err != nil:
			s.log.Warn("revoking a token failed; it is forgotten here all the same", "hint", t.hint, "err", err)
		case status/100 != 2:
			s.log.Warn("revoking a token failed; it is forgotten here all the same", "hint", t.hint, "status", status)
		}
	}
}
