package openapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// maxRefreshSkew is how long before its expiry a token is replaced at the
// most; short-lived tokens are replaced when a quarter of their life is
// left.
const maxRefreshSkew = 30 * time.Second

// A tokenSource obtains OAuth 2.0 access tokens by the client credentials
// grant (RFC 6749 section 4.4, internal/oauth's request and parsing) and
// caches them: a token is used until shortly before it expires, or until a
// caller reports it stale (the API answered 401 to it). Concurrent callers
// that need a new token share one token request (an oauth.Flight: a caller
// that gives up does not fail the others; close cancels it and waits).
// Every token obtained is added to the scrubber before any caller gets it.
type tokenSource struct {
	// Fixed at creation.
	cfg    *OAuth2
	fetch  *oauth.Fetcher
	shared *oauth.Flight[string]
	scrub  *scrub.Scrubber
	tokens *scrub.Slot // the last two tokens, replaced at each request (see scrub.Slot)
	log    *slog.Logger
	now    func() time.Time // time.Now; a test's clock

	mu    sync.Mutex
	tok   string    // the current token; guarded by mu
	until time.Time // when tok is to be replaced; zero: not before a 401
}

func newTokenSource(cfg *OAuth2, timeout time.Duration, s *scrub.Scrubber, log *slog.Logger) *tokenSource {
	return &tokenSource{cfg: cfg, fetch: oauth.NewFetcher(timeout), shared: oauth.NewFlight[string](errors.New("oauth2: the connector is closed")),
		now: time.Now, scrub: s, tokens: s.Slot(), log: log}
}

// token returns a token to send: the cached one unless it is due for
// replacement or is stale (the token the API just refused, "" for none),
// else a new one. A caller that joined another's token request and got
// back the token it knows stale joins the next one, which is asked with
// its stale token. It returns early with ctx's error when ctx ends.
func (ts *tokenSource) token(ctx context.Context, stale string) (string, error) {
	if tok := ts.cached(stale); tok != "" {
		return tok, nil
	}
	run := func(ctx context.Context) (string, error) { return ts.request(ctx, stale) }
	tok, err := ts.shared.Do(ctx, run)
	if err == nil && stale != "" && tok == stale {
		// The run joined was another caller's, which found in the cache
		// the token this caller knows stale: the next run is asked with
		// this caller's stale token, so it requests a new one.
		tok, err = ts.shared.Do(ctx, run)
	}
	return tok, err
}

// cached returns the cached token unless it is stale or due; else "".
func (ts *tokenSource) cached(stale string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tok != stale && (ts.until.IsZero() || ts.now().Before(ts.until)) {
		return ts.tok
	}
	return ""
}

// request asks the token endpoint for a token and caches it, unless one
// that is not stale was cached meanwhile (by the request a caller just
// missed). Errors hold the endpoint's error code and description,
// scrubbed, never the rest of its answer.
func (ts *tokenSource) request(ctx context.Context, stale string) (string, error) {
	if tok := ts.cached(stale); tok != "" {
		return tok, nil
	}
	start := ts.now()
	t, err := ts.fetch.ClientCredentials(ctx, ts.cfg.TokenURL, ts.cfg.ClientID, ts.cfg.ClientSecret, ts.cfg.Scopes, ts.scrub, start)
	if err != nil {
		return "", ts.scrub.Error(fmt.Errorf("oauth2: %w", err))
	}
	ts.tokens.Set(t.AccessToken, t.RefreshToken, t.IDToken)
	ts.mu.Lock()
	ts.tok, ts.until = t.AccessToken, time.Time{}
	if !t.Expiry.IsZero() {
		ts.until = t.Expiry.Add(-min(maxRefreshSkew, t.Expiry.Sub(start)/4))
	}
	ts.mu.Unlock()
	ts.log.Debug("oauth2 token obtained", "token_url", ts.scrub.String(ts.cfg.TokenURL), "expires", t.Expiry)
	return t.AccessToken, nil
}

// close cancels a token request under way and waits for it.
func (ts *tokenSource) close() {
	ts.shared.Close()
	ts.fetch.Close()
}
