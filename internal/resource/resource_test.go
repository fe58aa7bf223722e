package resource_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth/oauthtest"
	"github.com/codemode-mcp/codemode-mcp/internal/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newValidator is a Validator for the issuer of as, whose audience is its
// resource's /mcp, on a clock at the present.
func newValidator(t *testing.T, as *oauthtest.Server, change ...func(*resource.Config)) (*resource.Validator, *clock) {
	t.Helper()
	c := &clock{now: time.Now()}
	cfg := resource.Config{Issuer: as.Issuer(), Audience: as.ServerURL(), Now: c.Now}
	for _, ch := range change {
		ch(&cfg)
	}
	v, err := resource.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v, c
}

// A good JWT, signed with RS256, PS256 or ES256 by the issuer's published
// key, gives the principal its claims name: subject, name, email, client,
// scopes (scope or scp), groups and roles.
func TestGoodJWTGivesThePrincipal(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	for _, alg := range []string{"RS256", "PS256", "ES256"} {
		tok := as.SignJWT(alg, map[string]any{"sub": "alice-1", "name": "Alice", "email": "alice@example.com", "client_id": "cli",
			"scope": "codemode:run codemode:approve", "groups": []string{"eng", "ops"}, "roles": "approver", "aud": []string{"other", as.ServerURL()}})
		p, err := v.Validate(context.Background(), tok)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		want := &codemode.Principal{Issuer: as.Issuer(), Subject: "alice-1", Name: "Alice", Email: "alice@example.com", ClientID: "cli",
			Scopes: []string{"codemode:run", "codemode:approve"}, Groups: []string{"eng", "ops"}, Roles: []string{"approver"}, Token: codemode.Secret(tok)}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("%s: principal (-want +got):\n%s", alg, diff)
		}
	}
	// Hydra's JWTs name their scopes in scp, an array.
	p, err := v.Validate(context.Background(), as.SignJWT("RS256", map[string]any{"scp": []string{"codemode:run"}}))
	if err != nil || !p.HasScope(codemode.ScopeRun) {
		t.Errorf("scp: %+v, %v; want the scope codemode:run", p, err)
	}
}

// Every bad token is refused as invalid (ErrInvalid), with a reason in
// fixed words that never quotes the token.
func TestBadTokensAreInvalid(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	good := as.SignJWT("RS256", nil)
	if _, err := v.Validate(context.Background(), good); err != nil {
		t.Fatalf("the good token: %v", err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&as.CurrentKey().RSA.PublicKey)
	other := oauthtest.NewKey(as.CurrentKey().Kid) // another key under the published kid
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, token, reason string }{
		{"another audience", as.SignJWT("RS256", map[string]any{"aud": "https://elsewhere.example/mcp"}), "another resource"},
		{"no audience", as.SignJWT("RS256", map[string]any{"aud": nil}), "another resource"},
		{"expired", as.SignJWT("RS256", map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}), "expired"},
		{"no exp", as.SignJWT("RS256", map[string]any{"exp": nil}), "no exp"},
		{"not yet valid", as.SignJWT("RS256", map[string]any{"nbf": time.Now().Add(time.Hour).Unix()}), "not valid yet"},
		{"another issuer", as.SignJWT("RS256", map[string]any{"iss": "https://evil.example/"}), "another authorization server"},
		{"no subject", as.SignJWT("RS256", map[string]any{"sub": nil}), "no sub"},
		{"signed by another key", oauthtest.Sign(other, "RS256", claimsOf(t, good)), "does not verify"},
		{"signed by a key not published", oauthtest.Sign(oauthtest.NewKey("stranger"), "ES256", claimsOf(t, good)), "does not publish"},
		{"alg none", oauthtest.Sign(&oauthtest.Key{Kid: as.CurrentKey().Kid}, "none", claimsOf(t, good)), "algorithm"},
		{"HMAC with the public key", hs256(t, pub, as.CurrentKey().Kid, claimsOf(t, good)), "algorithm"},
		{"a kid naming a key of another type", oauthtest.Sign(&oauthtest.Key{Kid: as.CurrentKey().Kid, EC: p384}, "ES384", claimsOf(t, good)), "does not publish"},
		{"aud a number", as.SignJWT("RS256", map[string]any{"aud": 42}), "expected types"},
		{"exp a string", as.SignJWT("RS256", map[string]any{"exp": fmt.Sprint(time.Now().Add(time.Hour).Unix())}), "expected types"},
		{"iss an array", as.SignJWT("RS256", map[string]any{"iss": []string{as.Issuer()}}), "expected types"},
		{"characters outside b64token", "abc def", "b64token"},
		{"too long", strings.Repeat("a", resource.MaxTokenLen+1), "over"},
	} {
		_, err := v.Validate(context.Background(), tc.token)
		if !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v; want ErrInvalid saying %q", tc.name, err, tc.reason)
			continue
		}
		if len(tc.token) > 8 && strings.Contains(err.Error(), tc.token[len(tc.token)-8:]) {
			t.Errorf("%s: the error quotes the token: %v", tc.name, err)
		}
	}
}

// claimsOf returns a JWT's claims.
func claimsOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// hs256 signs claims with HMAC-SHA256 keyed by secret: the attack where a
// verifier uses the issuer's public key as an HMAC secret.
func hs256(t *testing.T, secret []byte, kid string, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"alg": "HS256", "kid": kid})
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// The issuer rotates its key: a token with the new kid makes the
// Validator fetch the keys again, and passes. A kid still unknown right
// after that fetch does not make another one until RefetchInterval has
// passed, so made-up kids cannot flood the issuer.
func TestKeyRotationNeedsNoRestart(t *testing.T) {
	as := oauthtest.New(t)
	v, clk := newValidator(t, as)
	jwks := func() int { return as.HitsOf("/jwks") }
	if _, err := v.Validate(context.Background(), as.SignJWT("ES256", nil)); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}
	if n := jwks(); n != 1 {
		t.Fatalf("%d fetches of the keys, want 1", n)
	}
	as.RotateKey()
	if _, err := v.Validate(context.Background(), as.SignJWT("ES256", nil)); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	if n := jwks(); n != 2 {
		t.Fatalf("%d fetches of the keys after the rotation, want 2", n)
	}
	stranger := oauthtest.NewKey("made-up")
	forged := oauthtest.Sign(stranger, "ES256", claimsOf(t, as.SignJWT("ES256", nil)))
	if _, err := v.Validate(context.Background(), forged); !errors.Is(err, resource.ErrInvalid) {
		t.Fatalf("an unknown kid: %v, want ErrInvalid", err)
	}
	if n := jwks(); n != 2 {
		t.Errorf("%d fetches after an unknown kid within RefetchInterval, want still 2", n)
	}
	clk.advance(resource.RefetchInterval)
	_, _ = v.Validate(context.Background(), forged)
	if n := jwks(); n != 3 {
		t.Errorf("%d fetches after an unknown kid past RefetchInterval, want 3", n)
	}
	// Keys older than KeysMaxAge are fetched again by the next token.
	clk.advance(resource.KeysMaxAge)
	later := as.SignJWT("ES256", map[string]any{"exp": clk.Now().Add(time.Hour).Unix()})
	if _, err := v.Validate(context.Background(), later); err != nil || jwks() != 4 {
		t.Errorf("after KeysMaxAge: %v, %d fetches; want the token good and 4 fetches", err, jwks())
	}
}

// A token that is not a JWT is introspected at the issuer, authenticated
// as the configured client: active gives the principal (and is cached for
// a while, never past the token's exp), inactive is refused; a token for
// another audience is refused even when active. The issuer refusing the
// client is the server's problem, not an invalid token.
func TestOpaqueTokensAreIntrospected(t *testing.T) {
	as := oauthtest.New(t)
	as.IntrospectClientID, as.IntrospectClientSecret = "codemode", "introspect-secret"
	v, clk := newValidator(t, as, func(c *resource.Config) { c.ClientID, c.ClientSecret = "codemode", "introspect-secret" })
	ctx := context.Background()
	tok := as.IssueOpaque(map[string]any{"sub": "bob", "email": "bob@example.com", "aud": []string{as.ServerURL()}, "scope": "codemode:approve",
		"exp": clk.Now().Add(time.Hour).Unix()})
	p, err := v.Validate(ctx, tok)
	if err != nil || p.Subject != "bob" || p.Email != "bob@example.com" || !p.HasScope(codemode.ScopeApprove) {
		t.Fatalf("an active opaque token: %+v, %v", p, err)
	}
	if _, err := v.Validate(ctx, tok); err != nil || as.HitsOf("/introspect") != 1 {
		t.Errorf("again at once: %v, %d introspections; want it cached (1)", err, as.HitsOf("/introspect"))
	}
	clk.advance(resource.CacheTTL)
	as.Deactivate(tok)
	if _, err := v.Validate(ctx, tok); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "not active") || as.HitsOf("/introspect") != 2 {
		t.Errorf("revoked, past the cache's TTL: %v, %d introspections; want ErrInvalid (not active) after a second introspection", err, as.HitsOf("/introspect"))
	}
	short := as.IssueOpaque(map[string]any{"sub": "bob", "aud": as.ServerURL(), "exp": clk.Now().Add(time.Second).Unix()})
	if _, err := v.Validate(ctx, short); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	as.Deactivate(short)
	if _, err := v.Validate(ctx, short); !errors.Is(err, resource.ErrInvalid) {
		t.Errorf("past its exp, within the cache's TTL: %v; want it asked again and refused", err)
	}
	if _, err := v.Validate(ctx, as.IssueOpaque(map[string]any{"sub": "bob", "aud": "https://elsewhere.example/"})); !errors.Is(err, resource.ErrInvalid) {
		t.Errorf("active for another audience: %v, want ErrInvalid", err)
	}
	if _, err := v.Validate(ctx, as.IssueOpaque(map[string]any{"sub": "bob", "aud": as.ServerURL(), "token_use": "refresh_token"})); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "not an access token") {
		t.Errorf("a refresh token (Hydra's token_use): %v, want ErrInvalid", err)
	}
	if _, err := v.Validate(ctx, "never-issued"); !errors.Is(err, resource.ErrInvalid) {
		t.Errorf("unknown: %v, want ErrInvalid", err)
	}
	wrong, _ := newValidator(t, as, func(c *resource.Config) { c.ClientID, c.ClientSecret = "codemode", "wrong" })
	if _, err := wrong.Validate(ctx, tok); err == nil || errors.Is(err, resource.ErrInvalid) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("the issuer refusing the client: %v; want an error that is not ErrInvalid and shows no secret", err)
	}
	none, _ := newValidator(t, as)
	if _, err := none.Validate(ctx, tok); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "server.auth.introspection") {
		t.Errorf("no introspection configured: %v; want ErrInvalid naming server.auth.introspection", err)
	}
}

// An issuer that cannot be reached is not an invalid token: the error
// does not wrap ErrInvalid (the guard answers 503, and the client keeps
// its token).
func TestUnreachableIssuerIsNotAnInvalidToken(t *testing.T) {
	as := oauthtest.New(t)
	tok := as.SignJWT("RS256", nil)
	v, _ := newValidator(t, as)
	as.AS.Close()
	if _, err := v.Validate(context.Background(), tok); err == nil || errors.Is(err, resource.ErrInvalid) {
		t.Errorf("issuer down: %v; want an error that is not ErrInvalid", err)
	}
}

// New refuses what cannot work: an issuer over plain http beyond
// loopback, no audience.
func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []resource.Config{
		{Issuer: "http://auth.example.com/", Audience: "https://mcp.example.com/mcp"},
		{Issuer: "https://auth.example.com/"},
	} {
		if v, err := resource.New(cfg); err == nil {
			v.Close()
			t.Errorf("%+v: accepted", cfg)
		}
	}
}

// A burst of tokens signed with a new key, validated at once, fetches the
// keys once more, not once per token (the fetches are serialised and a
// fetch finds the one made while it waited); every token passes.
func TestABurstAfterARotationFetchesTheKeysOnce(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	if _, err := v.Validate(context.Background(), as.SignJWT("ES256", nil)); err != nil {
		t.Fatal(err)
	}
	as.RotateKey()
	tok := as.SignJWT("ES256", nil)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			_, err := v.Validate(context.Background(), tok)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := as.HitsOf("/jwks"); n != 2 {
		t.Errorf("%d fetches of the keys, want 2 (the first, and one after the rotation)", n)
	}
}

// The cache of introspection answers holds at most CacheSize tokens:
// CacheSize+1 tokens asked about twice are not all answered from it the
// second time.
func TestIntrospectionCacheIsBounded(t *testing.T) {
	as := oauthtest.New(t)
	v, clk := newValidator(t, as, func(c *resource.Config) { c.ClientID = "codemode" })
	var toks []string
	for i := range resource.CacheSize + 1 {
		toks = append(toks, as.IssueOpaque(map[string]any{"sub": fmt.Sprintf("user-%d", i), "aud": as.ServerURL(), "exp": clk.Now().Add(time.Hour).Unix()}))
	}
	for range 2 {
		for _, tok := range toks {
			if _, err := v.Validate(context.Background(), tok); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := as.HitsOf("/introspect"); n <= len(toks) {
		t.Errorf("%d introspections for %d tokens asked about twice with room for %d, want more than %d", n, len(toks), resource.CacheSize, len(toks))
	}
}

// flakyIssuer is an issuer on 127.0.0.1 whose JWK Set answers 500 while
// failing is set, and the keys of key otherwise; it counts the fetches of
// its keys. Its introspection endpoint answers every token inactive.
type flakyIssuer struct {
	srv     *httptest.Server
	key     *oauthtest.Key
	failing atomic.Bool
	fetches atomic.Int32
	// cancel, when set, is called by a fetch of the keys or an
	// introspection, which then waits for the client to give up.
	cancel atomic.Pointer[context.CancelFunc]
	// more are keys the JWK Set publishes besides key's (set before use).
	more []map[string]string
	// hold, when set, makes a fetch of the keys send on it, then wait for
	// it to be closed before answering.
	hold atomic.Pointer[chan struct{}]
}

func newFlakyIssuer(t *testing.T, more ...map[string]string) *flakyIssuer {
	f := &flakyIssuer{key: oauthtest.NewKey("k1"), more: more}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": f.srv.URL, "jwks_uri": f.srv.URL + "/jwks", "introspection_endpoint": f.srv.URL + "/introspect"})
		case "/jwks", "/introspect":
			_ = r.ParseForm() // (the server sees the client go only once the body is read)
			if r.URL.Path == "/jwks" {
				f.fetches.Add(1)
				if hold := f.hold.Swap(nil); hold != nil {
					*hold <- struct{}{}
					<-*hold
				}
			}
			if cancel := f.cancel.Swap(nil); cancel != nil {
				(*cancel)()
				<-r.Context().Done()
				return
			}
			if r.URL.Path == "/introspect" {
				_, _ = w.Write([]byte(`{"active": false}`))
				return
			}
			if f.failing.Load() {
				http.Error(w, "down", http.StatusInternalServerError)
				return
			}
			b64 := base64.RawURLEncoding.EncodeToString
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": append([]map[string]string{{"kty": "EC", "kid": f.key.Kid, "crv": "P-256",
				"x": b64(f.key.EC.X.FillBytes(make([]byte, 32))), "y": b64(f.key.EC.Y.FillBytes(make([]byte, 32)))}}, f.more...)})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *flakyIssuer) token(now time.Time) string {
	return oauthtest.Sign(f.key, "ES256", map[string]any{"iss": f.srv.URL, "sub": "alice", "aud": "https://mcp.example/mcp", "exp": now.Add(2 * time.Hour).Unix()})
}

// Fetching the keys is rate-bound when it fails too: while the issuer's
// JWK Set cannot be fetched, tokens do not each fetch it (nor, in a
// burst, wait for one fetch after another), neither before the keys were
// ever fetched nor when keys past KeysMaxAge are fetched again (the old
// keys serve meanwhile).
func TestFailingKeyFetchesAreRateBound(t *testing.T) {
	f := newFlakyIssuer(t)
	f.failing.Store(true)
	clk := &clock{now: time.Now()}
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tok := f.token(clk.Now())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := v.Validate(context.Background(), tok); err == nil || errors.Is(err, resource.ErrInvalid) {
				t.Errorf("the keys cannot be fetched: %v; want an error that is not ErrInvalid", err)
			}
		})
	}
	wg.Wait()
	if _, err := v.Validate(context.Background(), tok); err == nil || errors.Is(err, resource.ErrInvalid) {
		t.Errorf("again: %v; want an error that is not ErrInvalid", err)
	}
	if n := f.fetches.Load(); n != 1 {
		t.Errorf("%d fetches of failing keys by 9 tokens within RefetchInterval, want 1", n)
	}
	clk.advance(resource.RefetchInterval)
	f.failing.Store(false)
	before := f.fetches.Load()
	if _, err := v.Validate(context.Background(), tok); err != nil || f.fetches.Load() != before+1 {
		t.Fatalf("past RefetchInterval, the keys back: %v, %d fetches; want the token good and one more fetch", err, f.fetches.Load()-before)
	}
	clk.advance(resource.KeysMaxAge)
	before = f.fetches.Load()
	f.failing.Store(true)
	tok = f.token(clk.Now())
	for range 3 {
		if _, err := v.Validate(context.Background(), tok); err != nil {
			t.Errorf("keys past KeysMaxAge that cannot be fetched again: %v; want the old keys used", err)
		}
	}
	if n := f.fetches.Load() - before; n != 1 {
		t.Errorf("%d fetches by 3 tokens with keys past KeysMaxAge and the issuer failing, want 1", n)
	}
}

// A request whose client gives up while the Validator reads the issuer's
// metadata or keys is no failure of the issuer: the next token does not
// get that request's error for RefetchInterval, it asks again.
func TestACallerGivingUpIsNotTheIssuerFailing(t *testing.T) {
	f := newFlakyIssuer(t)
	clk := &clock{now: time.Now()}
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tok := f.token(clk.Now())
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Validate(gone, tok); !errors.Is(err, context.Canceled) {
		t.Errorf("given up before the metadata: %v, want context.Canceled", err)
	}
	if _, err := v.Validate(context.Background(), tok); err != nil {
		t.Errorf("the next token, after a caller gave up reading the metadata: %v", err)
	}
	clk.advance(resource.KeysMaxAge)
	tok = f.token(clk.Now())
	gone, cancel = context.WithCancel(context.Background())
	f.cancel.Store(&cancel)
	_, _ = v.Validate(gone, tok) // (given up while fetching keys past KeysMaxAge)
	before := f.fetches.Load()
	if _, err := v.Validate(context.Background(), tok); err != nil || f.fetches.Load() != before+1 {
		t.Errorf("the next token, after a caller gave up fetching the keys: %v, %d fetches; want the keys fetched again",
			err, f.fetches.Load()-before)
	}
}

// A date claim beyond what a clock can say (or before 1970) is refused,
// not wrapped around into the past: an nbf of 1e19 seconds is not "long
// ago".
func TestDatesOutOfRangeAreRefused(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	for _, c := range []map[string]any{{"nbf": 1e19}, {"nbf": 9.2e18}, {"exp": 1e19}, {"exp": -1}, {"nbf": "0"}, {"exp": "NaN"}} {
		if _, err := v.Validate(context.Background(), as.SignJWT("RS256", c)); !errors.Is(err, resource.ErrInvalid) {
			t.Errorf("%v: %v, want ErrInvalid", c, err)
		}
	}
	exp := float64(time.Now().Add(time.Hour).UnixMilli()) / 1000
	if _, err := v.Validate(context.Background(), as.SignJWT("RS256", map[string]any{"exp": exp, "nbf": 0.5})); err != nil {
		t.Errorf("fractional dates: %v", err)
	}
}

// The sub, which names a person everywhere (runs, approvals, the audit,
// refusals), is refused when it holds a control character (it is never
// altered: two people must not become one).
func TestASubWithControlCharactersIsRefused(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	for _, sub := range []string{"alice\n2026-11-28 INFO approved", "alice\x1b[2J", "alice\u009b31m", "bob\x00"} {
		if _, err := v.Validate(context.Background(), as.SignJWT("RS256", map[string]any{"sub": sub})); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "sub") {
			t.Errorf("sub %q: %v, want ErrInvalid naming the sub", sub, err)
		}
	}
}

// Scopes, groups and roles decide what a person may do (policy matches
// them exactly): a value that is not printable UTF-8 of at most 256
// bytes is dropped, never altered into another (a scope
// "codemode:\x01approve" is not codemode:approve), and scopes are split
// at spaces only (RFC 6749's scope-token holds no other separator).
func TestAuthorisingClaimsAreKeptExactlyOrDropped(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	long := strings.Repeat("g", 256)
	p, err := v.Validate(context.Background(), as.SignJWT("RS256", map[string]any{
		"scope":  "codemode:run codemode:\x01approve x\u00a0codemode:admin",
		"groups": []string{"plat\x7fform", "ops", long + "x", "eng\u0085"},
		"roles":  []string{"appro\x00ver", "viewer"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := &codemode.Principal{Scopes: []string{"codemode:run", "x\u00a0codemode:admin"}, Groups: []string{"ops"}, Roles: []string{"viewer"}}
	if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(codemode.Principal{}, "Issuer", "Subject", "Token")); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
}

// An introspection answer of the wrong types (active "true", a string) or
// over the size the server reads is refused and not cached: the issuer
// misbehaves (an error that is not ErrInvalid, so 503), and it is asked
// again about the next request.
func TestOddIntrospectionAnswersAreRefused(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as, func(c *resource.Config) { c.ClientID = "codemode" })
	for _, c := range []map[string]any{
		{"active": "true", "sub": "bob", "aud": as.ServerURL()},
		{"sub": "bob", "aud": as.ServerURL(), "exp": "4102444800"},
		{"sub": "bob", "aud": as.ServerURL(), "padding": strings.Repeat("p", 2<<20)},
	} {
		tok := as.IssueOpaque(c)
		before := as.HitsOf("/introspect")
		for range 2 {
			if _, err := v.Validate(context.Background(), tok); err == nil || errors.Is(err, resource.ErrInvalid) || strings.Contains(err.Error(), tok) {
				t.Errorf("%.60v: %v; want an error, not ErrInvalid, without the token", c, err)
			}
		}
		if n := as.HitsOf("/introspect") - before; n != 2 {
			t.Errorf("%.60v: %d introspections for 2 requests, want 2 (nothing cached)", c, n)
		}
	}
}

// A token whose sub is "local" is refused: that subject is the local
// user's (the command line on the server's machine, a server on stdio or
// behind the static token, sharing the store), whose runs and decisions
// a person at the issuer must not see or make as theirs. An ID token is
// refused the same way.
func TestTheLocalSubjectIsNotAnIssuers(t *testing.T) {
	as := oauthtest.New(t)
	v, _ := newValidator(t, as)
	_, err := v.Validate(context.Background(), as.SignJWT("RS256", map[string]any{"sub": codemode.LocalSubject}))
	if !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "local user") {
		t.Errorf("sub %q: %v; want ErrInvalid saying it is the local user's", codemode.LocalSubject, err)
	}
}

// An RSA key over 8192 bits in the issuer's JWK Set is skipped, so that
// no token costs a verification with it (one with a 65,536-bit modulus
// takes about 0.1 s of CPU, for any made-up signature).
func TestHugeRSAKeysAreSkipped(t *testing.T) {
	n := new(big.Int).Lsh(big.NewInt(1), 65535)
	f := newFlakyIssuer(t, map[string]string{"kty": "RSA", "kid": "huge", "n": base64.RawURLEncoding.EncodeToString(n.Add(n, big.NewInt(1)).Bytes()), "e": "AQAB"})
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "huge"})
	c, _ := json.Marshal(map[string]any{"iss": f.srv.URL, "sub": "alice", "aud": "https://mcp.example/mcp", "exp": time.Now().Add(time.Hour).Unix()})
	b64 := base64.RawURLEncoding.EncodeToString
	forged := b64(h) + "." + b64(c) + "." + b64(make([]byte, 8192))
	if _, err := v.Validate(context.Background(), forged); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "does not publish") {
		t.Errorf("a token naming a 65,536-bit key: %v; want ErrInvalid, the key not published", err)
	}
}

// An introspection endpoint that does not answer holds a request no
// longer than its caller waits (and at most Timeout): the Validate
// returns when the caller gives up, with an error that is not
// ErrInvalid.
func TestASlowIntrospectionEndsWithItsCaller(t *testing.T) {
	f := newFlakyIssuer(t)
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp", ClientID: "codemode"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Validate(context.Background(), "opaque-1"); !errors.Is(err, resource.ErrInvalid) {
		t.Fatalf("an inactive token: %v, want ErrInvalid", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel.Store(&cancel)
	if _, err := v.Validate(ctx, "opaque-2"); !errors.Is(err, context.Canceled) || errors.Is(err, resource.ErrInvalid) || strings.Contains(err.Error(), "opaque-2") {
		t.Errorf("the caller gave up during the introspection: %v; want context.Canceled, not ErrInvalid, without the token", err)
	}
}

// While keys past KeysMaxAge are fetched again from an issuer that is
// slow to answer, the tokens whose key the old keys hold are not kept
// waiting for it (until the fetch times out, as they were): only the
// token that started the fetch waits.
func TestASlowKeyFetchHoldsOnlyItsOwnToken(t *testing.T) {
	f := newFlakyIssuer(t)
	clk := &clock{now: time.Now()}
	var log logBuffer
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp", Now: clk.Now,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Validate(context.Background(), f.token(clk.Now())); err != nil {
		t.Fatal(err)
	}
	clk.advance(resource.KeysMaxAge)
	tok := f.token(clk.Now())
	hold := make(chan struct{})
	f.hold.Store(&hold)
	first := make(chan error, 1)
	go func() {
		_, err := v.Validate(context.Background(), tok)
		first <- err
	}()
	<-hold // the first token's fetch is at the issuer
	if _, err := v.Validate(context.Background(), tok); err != nil {
		t.Errorf("during another's fetch, with the key held: %v", err)
	}
	if strings.Contains(log.String(), "cannot fetch the issuer's keys") {
		t.Errorf("the second token waited for the first's fetch to time out: %s", log.String())
	}
	close(hold)
	if err := <-first; err != nil {
		t.Errorf("the token that fetched: %v", err)
	}
}

// logBuffer is a log's text, written and read concurrently.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A JWK Set over the size the server reads (1 MiB) is a failure to fetch
// the keys, not an invalid token, and is not read again at once.
func TestAHugeKeySetIsRefused(t *testing.T) {
	f := newFlakyIssuer(t, map[string]string{"kty": "oct", "k": strings.Repeat("A", 2<<20)})
	v, err := resource.New(resource.Config{Issuer: f.srv.URL, Audience: "https://mcp.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for range 2 {
		if _, err := v.Validate(context.Background(), f.token(time.Now())); err == nil || errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "over") {
			t.Errorf("a 2 MiB JWK Set: %v; want a failure to fetch the keys (over the bound), not ErrInvalid", err)
		}
	}
	if n := f.fetches.Load(); n != 1 {
		t.Errorf("%d fetches of a huge JWK Set by 2 tokens, want 1", n)
	}
}

// Claim names are read exactly: encoding/json would match "SUB", "Scope"
// or "ſub" (which folds to "sub") for the claim it reads and keep the last,
// so an issuer that lets a user name a custom claim would let them choose
// their subject or scopes. A token (or an introspection answer) holding
// a claim the Validator reads in another case, or twice, is refused.
func TestClaimNamesAreReadExactly(t *testing.T) {
	as := oauthtest.New(t)
	as.IntrospectClientID, as.IntrospectClientSecret = "codemode", "introspect-secret"
	v, _ := newValidator(t, as, func(c *resource.Config) { c.ClientID, c.ClientSecret = "codemode", "introspect-secret" })
	ctx := context.Background()
	key := as.CurrentKey().RSA
	raw := func(payload string) string {
		tok, err := jws.Sign(key, jws.Header{Alg: "RS256", Kid: as.CurrentKey().Kid, Typ: "at+jwt"}, json.RawMessage(payload))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := fmt.Sprintf(`"iss":%q,"aud":%q,"exp":%d`, as.Issuer(), as.ServerURL(), time.Now().Add(time.Hour).Unix())
	if _, err := v.Validate(ctx, raw(`{`+good+`,"sub":"alice","Sub2":"x","custom":{"sub":"admin","SUB":1}}`)); err != nil {
		t.Fatalf("a token with sub once, and other claims that fold to nothing read: %v", err)
	}
	for name, tok := range map[string]string{
		"SUB beside sub":       as.SignJWT("RS256", map[string]any{"sub": "alice", "SUB": "admin"}),
		"ſub beside sub":       as.SignJWT("RS256", map[string]any{"sub": "alice", "ſub": "admin"}),
		"Scope alone":          as.SignJWT("RS256", map[string]any{"Scope": "codemode:approve"}),
		"Groups alone":         as.SignJWT("RS256", map[string]any{"Groups": []string{"admins"}}),
		"escaped \\u0053UB":    raw(`{` + good + `,"sub":"alice","\u0053UB":"admin"}`),
		"sub twice":            raw(`{` + good + `,"sub":"alice","sub":"admin"}`),
		"introspection: Scope": as.IssueOpaque(map[string]any{"sub": "bob", "aud": as.ServerURL(), "Scope": "codemode:approve"}),
		"introspection: ſub":   as.IssueOpaque(map[string]any{"sub": "bob", "aud": as.ServerURL(), "ſub": "admin"}),
	} {
		p, err := v.Validate(ctx, tok)
		if !errors.Is(err, resource.ErrInvalid) || strings.Contains(err.Error(), "admin") {
			t.Errorf("%s: %+v, %v; want ErrInvalid, naming no value", name, p, err)
		}
	}
}

// BenchmarkValidate validates a JWT access token (its keys fetched).
func BenchmarkValidate(b *testing.B) {
	as := oauthtest.New(b)
	for _, alg := range []string{"ES256", "RS256"} {
		b.Run(alg, func(b *testing.B) {
			v, err := resource.New(resource.Config{Issuer: as.Issuer(), Audience: as.ServerURL()})
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			tok := as.SignJWT(alg, map[string]any{"sub": "alice-1", "name": "Alice", "email": "alice@example.com",
				"scope": "codemode:run codemode:approve", "groups": []string{"eng", "ops"}})
			ctx := context.Background()
			if _, err := v.Validate(ctx, tok); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Validate(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// askedDone is a context that reports the first call of its Done: the
// Validate it was given has looked in the cache and gone on to introspect
// (or to wait for the introspection another Validate made).
type askedDone struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *askedDone) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// Validates of one opaque token at once share one introspection: the
// first asks the issuer, the others, arriving while it is under way, wait
// for its answer.
func TestConcurrentValidatesOfATokenIntrospectOnce(t *testing.T) {
	var hits atomic.Int32
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if hits.Add(1) == 1 {
			arrived <- struct{}{}
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active":true,"sub":"bob","aud":"https://mcp.example/mcp"}`))
	}))
	defer srv.Close()
	v, err := resource.New(resource.Config{Issuer: srv.URL, Audience: "https://mcp.example/mcp", IntrospectionEndpoint: srv.URL + "/introspect"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	const n = 8
	var wg sync.WaitGroup
	validate := func(ctx context.Context) {
		wg.Go(func() {
			if p, err := v.Validate(ctx, "opaque-1"); err != nil || p.Subject != "bob" {
				t.Errorf("Validate: %+v, %v; want bob", p, err)
			}
		})
	}
	validate(context.Background())
	<-arrived // the first is at the issuer
	for range n - 1 {
		ctx := &askedDone{Context: context.Background(), asked: make(chan struct{})}
		validate(ctx)
		<-ctx.asked // past the cache, which has no answer yet
	}
	close(release)
	wg.Wait()
	if got := hits.Load(); got != 1 {
		t.Errorf("%d Validates at once: %d introspections, want 1", n, got)
	}
}

// A Validate waiting for another's introspection of its token asks the
// issuer itself when that other gives up: the other's canceled context
// is not its answer.
func TestAWaitingValidateAsksWhenTheOtherGivesUp(t *testing.T) {
	var hits atomic.Int32
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if hits.Add(1) == 1 {
			arrived <- struct{}{}
			<-r.Context().Done() // until its caller gives up
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active":true,"sub":"bob","aud":"https://mcp.example/mcp"}`))
	}))
	defer srv.Close()
	v, err := resource.New(resource.Config{Issuer: srv.URL, Audience: "https://mcp.example/mcp", IntrospectionEndpoint: srv.URL + "/introspect"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	first, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := v.Validate(first, "opaque-1")
		gaveUp <- err
	}()
	<-arrived
	second := &askedDone{Context: context.Background(), asked: make(chan struct{})}
	got := make(chan error, 1)
	go func() {
		p, err := v.Validate(second, "opaque-1")
		if err == nil && p.Subject != "bob" {
			err = fmt.Errorf("subject %q, want bob", p.Subject)
		}
		got <- err
	}()
	<-second.asked
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("the first, given up: %v, want context.Canceled", err)
	}
	if err := <-got; err != nil || hits.Load() != 2 {
		t.Errorf("the second: %v after %d introspections; want bob after its own (2)", err, hits.Load())
	}
}

// An issuer that moves its keys to another jwks_uri (its metadata names
// the new one) needs no restart: a token whose key the old keys lack
// makes the Validator read the metadata again (at most once every
// RefetchInterval), then the keys at the new place.
func TestAMovedJWKSURINeedsNoRestart(t *testing.T) {
	as, moved := oauthtest.New(t), oauthtest.New(t)
	v, clk := newValidator(t, as)
	if _, err := v.Validate(context.Background(), as.SignJWT("RS256", nil)); err != nil {
		t.Fatal(err)
	}
	if moved.CurrentKey().Kid == as.CurrentKey().Kid {
		moved.RotateKey()
	}
	as.Set(func(s *oauthtest.Server) { s.JWKSURI = moved.Issuer() + "/jwks" })
	tok := moved.SignJWT("ES256", map[string]any{"iss": as.Issuer(), "aud": as.ServerURL(), "exp": clk.Now().Add(time.Hour).Unix()})
	if _, err := v.Validate(context.Background(), tok); !errors.Is(err, resource.ErrInvalid) || moved.HitsOf("/jwks") != 0 {
		t.Errorf("at once: %v, %d fetches at the new place; want it refused (the metadata was just read), none", err, moved.HitsOf("/jwks"))
	}
	clk.advance(resource.RefetchInterval)
	if _, err := v.Validate(context.Background(), tok); err != nil {
		t.Errorf("after RefetchInterval: %v; want the token good, its key found at the new jwks_uri", err)
	}
	if n := as.HitsOf("/.well-known/oauth-authorization-server"); n != 2 {
		t.Errorf("the metadata was read %d times, want 2", n)
	}
}

// An introspection that refuses a token is cached too, for CacheTTL, in
// a cache of its own: a client repeating a bad opaque token costs the
// issuer one introspection each CacheTTL, and a flood of bad tokens does
// not push good ones out of the cache of active answers.
func TestRefusedIntrospectionsAreCachedApart(t *testing.T) {
	as := oauthtest.New(t)
	v, clk := newValidator(t, as, func(c *resource.Config) { c.ClientID = "codemode" })
	ctx := context.Background()
	good := as.IssueOpaque(map[string]any{"sub": "bob", "aud": as.ServerURL(), "exp": clk.Now().Add(time.Hour).Unix()})
	if _, err := v.Validate(ctx, good); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := v.Validate(ctx, "never-issued"); !errors.Is(err, resource.ErrInvalid) || !strings.Contains(err.Error(), "not active") {
			t.Fatalf("an unknown token: %v; want ErrInvalid (not active)", err)
		}
	}
	if n := as.HitsOf("/introspect"); n != 2 {
		t.Errorf("%d introspections for a good token and a bad one asked about 3 times, want 2", n)
	}
	for i := range resource.CacheSize + 1 {
		if _, err := v.Validate(ctx, fmt.Sprintf("bad-%d", i)); !errors.Is(err, resource.ErrInvalid) {
			t.Fatal(err)
		}
	}
	before := as.HitsOf("/introspect")
	if _, err := v.Validate(ctx, good); err != nil || as.HitsOf("/introspect") != before {
		t.Errorf("the good token after a flood of bad ones: %v, %d more introspections; want it cached still", err, as.HitsOf("/introspect")-before)
	}
	clk.advance(resource.CacheTTL)
	if _, err := v.Validate(ctx, "never-issued"); !errors.Is(err, resource.ErrInvalid) || as.HitsOf("/introspect") != before+1 {
		t.Errorf("past CacheTTL: %v, %d more introspections; want it asked again", err, as.HitsOf("/introspect")-before)
	}
}

// At most MaxIntrospections introspections are under way at once, all
// tokens together: a flood of distinct opaque tokens does not make as
// many requests to the issuer at once. A Validate waiting for room gives
// up with its context, saying why, and asks nothing.
func TestConcurrentIntrospectionsAreBounded(t *testing.T) {
	var hits atomic.Int32
	arrived, release := make(chan struct{}, resource.MaxIntrospections+1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		hits.Add(1)
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active":true,"sub":"bob","aud":"https://mcp.example/mcp"}`))
	}))
	defer srv.Close()
	v, err := resource.New(resource.Config{Issuer: srv.URL, Audience: "https://mcp.example/mcp", IntrospectionEndpoint: srv.URL + "/introspect"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var wg sync.WaitGroup
	for i := range resource.MaxIntrospections {
		wg.Go(func() {
			if _, err := v.Validate(context.Background(), fmt.Sprintf("opaque-%d", i)); err != nil {
				t.Errorf("Validate %d: %v", i, err)
			}
		})
	}
	for range resource.MaxIntrospections {
		<-arrived // all at the issuer
	}
	ctx, cancel := context.WithCancel(context.Background())
	asked := &askedDone{Context: ctx, asked: make(chan struct{})}
	gaveUp := make(chan error, 1)
	go func() {
		_, err := v.Validate(asked, "opaque-one-too-many")
		gaveUp <- err
	}()
	<-asked.asked
	cancel()
	err = <-gaveUp
	close(release)
	wg.Wait()
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "under way") || hits.Load() != resource.MaxIntrospections {
		t.Errorf("one more Validate while %d introspections are under way, given up: %v after %d introspections; want context.Canceled waiting for room, and %d",
			resource.MaxIntrospections, err, hits.Load(), resource.MaxIntrospections)
	}
}
