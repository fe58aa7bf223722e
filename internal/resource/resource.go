// Package resource makes codemode-mcp an OAuth 2.1 resource server (the
// MCP authorization specification): it validates the access tokens a
// team's authorization server (the issuer) issued for this server, and
// says who they are for (a codemode.Principal).
//
// A token that is a JWT is verified against the issuer's signing keys,
// found through its metadata (RFC 8414 / OpenID Connect discovery, by
// internal/oauth's Fetcher) and its jwks_uri, and cached; a key id the
// cache does not know makes it fetch the keys again (at most once per
// RefetchInterval; the metadata first when that is as old, as the issuer
// may have moved them), so the issuer rotates its keys without a restart. Its
// alg must be one of jws.Algorithms (asymmetric only: never "none", never an
// HMAC that a public key would verify); iss must be the issuer, aud must
// name the audience (RFC 8707's resource), exp must be in the future and
// nbf in the past, within Skew. Any other token is introspected (RFC 7662)
// at the issuer's introspection endpoint with the configured client, and
// an active answer is cached for at most CacheTTL (and never past the
// token's exp), in a cache of at most CacheSize tokens, by the token's
// SHA-256 (an answer refusing it for CacheTTL, in a cache of its own of
// CacheSize): a token is never kept, logged or put in an error.
package resource

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// ErrInvalid is wrapped by the error of a token that is not good for this
// server: the client must get another (401 invalid_token). The text after
// it says why in fixed words, never quoting the token or its claims.
var ErrInvalid = errors.New("invalid access token")

// How a Validator deals with the issuer and the clock.
const (
	// Skew is the clock difference allowed on exp and nbf.
	Skew = 30 * time.Second
	// RefetchInterval is the least time between two fetches of the keys
	// (but for the first that succeeds): caused by a key id the cache
	// does not know, by keys past KeysMaxAge, or after a fetch failed;
	// and between two reads of the issuer's metadata.
	RefetchInterval = 10 * time.Second
	// KeysMaxAge is how long fetched keys (and the metadata) are used
	// before the next token fetches them again (a key the issuer withdrew
	// stops working then).
	KeysMaxAge = time.Hour
	// CacheTTL bounds how long an introspection answer is used.
	CacheTTL = 10 * time.Second
	// CacheSize bounds the tokens whose introspection answers are cached
	// (active ones, and apart those refusing the token).
	CacheSize = 1024
	// Timeout bounds each request to the issuer.
	Timeout = 10 * time.Second
	// MaxIntrospections bounds the introspections under way at once, all
	// tokens together; a Validate that finds no room waits for it (until
	// its context ends).
	MaxIntrospections = 16
)

// MaxTokenLen bounds a bearer token; a longer one is refused unread.
const MaxTokenLen = 16 << 10

// maxClaimLen bounds a claim kept in a Principal (a name, an email, a
// group); maxSubjectLen a subject, which is refused when longer.
const (
	maxClaimLen   = 256
	maxSubjectLen = 1024
)

// Config configures a Validator.
type Config struct {
	// Issuer is the authorization server's issuer identifier (https, or
	// http to a loopback address).
	Issuer string
	// Audience is what a token's aud (or its introspection's) must name:
	// this server's resource identifier, unless the issuer is told to use
	// another.
	Audience string
	// ClientID and ClientSecret authenticate introspection requests
	// (client_secret_basic). IntrospectionEndpoint overrides the one the
	// issuer's metadata names (an issuer may not publish it: Ory Hydra
	// serves it on its admin port). With neither ClientID nor
	// IntrospectionEndpoint, tokens that are not JWTs are refused.
	ClientID, ClientSecret string
	IntrospectionEndpoint  string
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// A Validator validates access tokens for one resource server. It is safe
// for concurrent use; it starts no goroutine (requests to the issuer are
// made by the Validate that needs them).
type Validator struct {
	// fixed at creation
	cfg   Config
	fetch *oauth.Fetcher

	// metaMu guards the metadata, and is held while it is read.
	metaMu    sync.Mutex
	meta      *oauth.IssuerMetadata // nil until read
	metaAt    time.Time             // when meta was read
	metaErr   error                 // the last failure to read it
	metaTried time.Time             // the last read, good or not

	// fetchMu serialises fetches of the keys, so that a burst of tokens
	// with a new key id makes one request.
	fetchMu sync.Mutex

	mu        sync.Mutex
	keys      *keySet                       // nil until fetched
	keysErr   error                         // why the last fetch failed, while keys is nil
	fetches   int                           // fetches of the keys made, good or not
	refetched time.Time                     // the last fetch that counts against RefetchInterval
	cache     map[[sha256.Size]byte]cached  // active introspection answers
	refused   map[[sha256.Size]byte]cached  // introspection answers refusing the token
	flights   map[[sha256.Size]byte]*flight // the introspections under way

	introspections chan struct{} // a slot per introspection under way (MaxIntrospections)
}

// cached is an introspection's outcome: the principal, or the ErrInvalid
// of an answer refusing the token.
type cached struct {
	p       *codemode.Principal
	err     error
	expires time.Time
}

// New returns a Validator for cfg. It reaches the issuer only when a
// token needs it.
func New(cfg Config) (*Validator, error) {
	if err := oauth.CheckIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	if e := cfg.IntrospectionEndpoint; e != "" {
		if err := oauth.CheckURL(e, "the introspection endpoint"); err != nil {
			return nil, err
		}
	}
	if cfg.Audience == "" {
		return nil, errors.New("resource: no audience")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Validator{cfg: cfg, fetch: oauth.NewFetcher(Timeout), cache: map[[sha256.Size]byte]cached{}, refused: map[[sha256.Size]byte]cached{}, flights: map[[sha256.Size]byte]*flight{},
		introspections: make(chan struct{}, MaxIntrospections)}, nil
}

// Close closes the idle connections of the Validator's own transport.
func (v *Validator) Close() { v.fetch.Close() }

// Issuer is the issuer identifier tokens must come from.
func (v *Validator) Issuer() string { return v.cfg.Issuer }

// Validate checks an access token and returns who it is for. The error
// wraps ErrInvalid when the token is not good for this server; any other
// error is a failure to reach the issuer (the token may be good).
func (v *Validator) Validate(ctx context.Context, token string) (*codemode.Principal, error) {
	switch {
	case token == "":
		return nil, fmt.Errorf("%w: no token", ErrInvalid)
	case len(token) > MaxTokenLen:
		return nil, fmt.Errorf("%w: the token is over %d bytes", ErrInvalid, MaxTokenLen)
	case strings.ContainsFunc(token, NotToken68):
		return nil, fmt.Errorf("%w: the token holds characters outside RFC 6750's b64token", ErrInvalid)
	}
	var p *codemode.Principal
	var err error
	if h, ok := jws.Parse(token); ok {
		p, err = v.verifyJWT(ctx, token, h)
	} else {
		p, err = v.introspect(ctx, token)
	}
	if err != nil {
		return nil, err
	}
	withToken := *p // (a cached principal is shared: a copy carries the token)
	withToken.Token = codemode.Secret(token)
	return &withToken, nil
}

// NotToken68 reports a rune outside RFC 6750's b64token (the characters a
// bearer token may hold).
func NotToken68(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("-._~+/=", r)
}

// metadata returns the issuer's metadata, reading it on first use and
// again once it is maxAge old (KeysMaxAge; RefetchInterval for a token
// whose key the keys lack, as the issuer may have moved them to another
// jwks_uri). A read waits RefetchInterval after the last; one that fails
// leaves the old metadata in use, and a caller giving up is no failure.
func (v *Validator) metadata(ctx context.Context, maxAge time.Duration) (*oauth.IssuerMetadata, error) {
	v.metaMu.Lock()
	defer v.metaMu.Unlock()
	now := v.cfg.Now()
	if (v.meta == nil || now.Sub(v.metaAt) >= maxAge) && now.Sub(v.metaTried) >= RefetchInterval {
		got, err := v.fetch.Issuer(ctx, v.cfg.Issuer)
		if err != nil && ctx.Err() != nil {
			return nil, err // this caller gave up: no failure of the issuer's, not kept
		}
		v.metaTried = v.cfg.Now()
		if err != nil {
			v.metaErr = fmt.Errorf("the issuer's metadata: %w", err)
			v.cfg.Logger.Warn("server.auth: cannot read the issuer's metadata", "issuer", v.cfg.Issuer, "err", err)
		} else {
			v.meta, v.metaAt, v.metaErr = &got, v.metaTried, nil
		}
	}
	if v.meta == nil {
		return nil, v.metaErr
	}
	return v.meta, nil
}

// idClaims are the claims of an ID token the Validator reads, which an
// access token's claim set may carry too.
type idClaims struct {
	Issuer   string    `json:"iss"`
	Subject  string    `json:"sub"`
	Audience StrOrList `json:"aud"`
	Azp      string    `json:"azp"`
	Exp      *numeric  `json:"exp"`
	Nonce    string    `json:"nonce"` // ID tokens only
	Name     string    `json:"name"`
	Username string    `json:"preferred_username"`
	Email    string    `json:"email"`
}

// claims is the part of an access token's claim set (a JWT's payload or
// an introspection answer) the Validator reads.
type claims struct {
	idClaims
	Active   *bool     `json:"active"` // introspection only
	Nbf      *numeric  `json:"nbf"`
	Scope    string    `json:"scope"`
	Scp      StrOrList `json:"scp"`
	ClientID string    `json:"client_id"`
	Groups   StrOrList `json:"groups"`
	Roles    StrOrList `json:"roles"`
	TokenUse string    `json:"token_use"` // Hydra's introspection: access_token or refresh_token
}

// claimNames are the JSON names of the claims the Validator reads (the
// tags of claims and the idClaims it embeds), for decodeClaims.
var claimNames = func() (names [][]byte) {
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			if f := t.Field(i); f.Anonymous {
				add(f.Type)
			} else {
				names = append(names, []byte(f.Tag.Get("json")))
			}
		}
	}
	add(reflect.TypeFor[claims]())
	return names
}()

// decodeClaims decodes a claim set (a JWT's payload, an introspection
// answer: what names it in the error) into c (a *claims or *idClaims),
// reading claim names exactly.
// encoding/json matches a name case-insensitively, with Unicode folding
// ("SUB" and "ſub" are "sub"), and keeps the last of several: an issuer
// that lets a user add a custom claim would let them choose their
// subject, scopes or groups. So a claim set that names a claim the
// Validator reads in another case, or twice, is refused (ErrInvalid),
// naming the claim, never a value. The check scans the names of the
// object's members without allocating (the set decoded: it is valid JSON).
func decodeClaims(b []byte, c any, what string) error {
	if err := json.Unmarshal(b, c); err != nil {
		return err
	}
	var seen uint64 // bit i: claimNames[i] met exactly
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			start, escaped := i, false
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					escaped, i = true, i+1
				}
			}
			if depth != 1 || !isMemberName(b[i+1:]) {
				continue
			}
			name := b[start+1 : i]
			if escaped { // (rare: spelt with escapes, it is the name they spell)
				var s string
				if err := json.Unmarshal(b[start:i+1], &s); err != nil {
					return err
				}
				name = []byte(s)
			}
			for n, want := range claimNames {
				switch {
				case string(name) == string(want) && seen&(1<<n) == 0:
					seen |= 1 << n
				case bytes.EqualFold(name, want):
					return fmt.Errorf("%w: the %s names the claim %s twice, or in another case too", ErrInvalid, what, want)
				}
			}
		}
	}
	return nil
}

// isMemberName reports whether the JSON after a string is a colon: the
// string was a member's name.
func isMemberName(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}

// StrOrList is a claim RFC 7519 lets be a string or an array of strings
// (aud, and others by custom).
type StrOrList []string

func (s *StrOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = StrOrList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*s = many
	return nil
}

// numeric is a NumericDate (seconds since the epoch, maybe fractional),
// from 1970 to the end of year 9999: a date beyond is refused, not
// wrapped around by time.Unix into another.
type numeric float64

// maxNumericDate is 9999-12-31T23:59:59Z.
const maxNumericDate = 253402300799

func (n *numeric) UnmarshalJSON(b []byte) error {
	// (b is a JSON value: a number, or another value ParseFloat refuses.)
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || !(f >= 0 && f <= maxNumericDate) {
		return errors.New("want a date: seconds from 1970 to 9999")
	}
	*n = numeric(f)
	return nil
}

func (n numeric) time() time.Time {
	sec := float64(n)
	return time.Unix(int64(sec), int64((sec-float64(int64(sec)))*1e9))
}

// checkIdentity checks what every token the Validator reads must say:
// iss the issuer, exp in the future (within Skew), a short UTF-8 sub
// without control characters that is not codemode.LocalSubject. A
// signed token must have iss and exp; an introspection answer may leave
// them out. what names the token in the error ("token", "ID token").
func (v *Validator) checkIdentity(c *idClaims, what string, signed bool) error {
	invalid := func(why string) error { return fmt.Errorf("%w: the %s %s", ErrInvalid, what, why) }
	switch {
	case c.Issuer == "" && signed:
		return invalid("has no iss")
	case c.Issuer != "" && !sameURL(c.Issuer, v.cfg.Issuer):
		return invalid("was issued by another authorization server")
	case c.Exp == nil && signed:
		return invalid("has no exp")
	case c.Exp != nil && !v.cfg.Now().Before(c.Exp.time().Add(Skew)):
		return invalid("has expired")
	case c.Subject == "":
		return invalid("has no sub")
	case len(c.Subject) > maxSubjectLen || !utf8.ValidString(c.Subject) || strings.ContainsFunc(c.Subject, unicode.IsControl):
		return invalid("has a sub that is not a short UTF-8 string without control characters")
	case c.Subject == codemode.LocalSubject: // (runs and decisions of the command line, or of the server before server.auth, are its)
		return invalid(`has the sub "local", which this server keeps for its local user`)
	}
	return nil
}

// check validates the claims every access token must satisfy and makes
// the Principal.
func (v *Validator) check(c *claims, signed bool) (*codemode.Principal, error) {
	if err := v.checkIdentity(&c.idClaims, "token", signed); err != nil {
		return nil, err
	}
	switch {
	case c.Nbf != nil && v.cfg.Now().Add(Skew).Before(c.Nbf.time()):
		return nil, fmt.Errorf("%w: the token is not valid yet (nbf)", ErrInvalid)
	case !audienceNames(c.Audience, v.cfg.Audience):
		return nil, fmt.Errorf("%w: the token is for another resource (its aud does not name this server's audience, server.auth.audience)", ErrInvalid)
	case c.TokenUse != "" && c.TokenUse != "access_token":
		return nil, fmt.Errorf("%w: the token is not an access token", ErrInvalid)
	}
	scopes := splitScopes(c.Scope)
	if len(scopes) == 0 {
		for _, s := range c.Scp {
			scopes = append(scopes, splitScopes(s)...)
		}
	}
	return &codemode.Principal{
		Issuer:   v.cfg.Issuer,
		Subject:  c.Subject,
		Name:     bounded(cmp.Or(c.Name, c.Username)),
		Email:    bounded(c.Email),
		ClientID: bounded(cmp.Or(c.ClientID, c.Azp)),
		Scopes:   exactly(scopes),
		Groups:   exactly(c.Groups),
		Roles:    exactly(c.Roles),
	}, nil
}

// audienceNames reports whether aud names want (an audience with or
// without a trailing slash: a resource is its URL either way).
func audienceNames(aud []string, want string) bool {
	return slices.ContainsFunc(aud, func(a string) bool { return sameURL(a, want) })
}

// sameURL reports whether a and b are the same but for a trailing slash.
func sameURL(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

// bounded is a claim kept for display: valid UTF-8 without control
// characters, clipped at maxClaimLen bytes.
func bounded(s string) string { return short.Clip(noControls(strings.ToValidUTF8(s, "")), maxClaimLen) }

// noControls is s without its control characters (C0, DEL and C1).
func noControls(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// splitScopes splits a scope claim at its spaces (RFC 6749 section 3.3:
// a scope token holds no other separator, so no other whitespace splits).
func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
}

// maxListLen bounds the scopes, groups or roles kept of a token.
const maxListLen = 256

// exactly is the values of a claim that decides what a person may do
// (scopes, groups, roles; the policy matches them exactly) that are
// valid UTF-8 of at most maxClaimLen bytes without control characters:
// another is dropped, never altered (into a value it is not).
func exactly(ss []string) []string {
	var out []string
	for _, s := range ss {
		if len(out) == maxListLen {
			break
		}
		if s != "" && len(s) <= maxClaimLen && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
			out = append(out, s)
		}
	}
	return out
}
