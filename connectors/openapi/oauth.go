package openapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 1 << 20

// maxRefreshSkew is how long before its expiry a token is replaced at the
// most; short-lived tokens are replaced when a quarter of their life is
// left.
const maxRefreshSkew = 30 * time.Second

// A tokenSource obtains OAuth 2.0 access tokens by the client credentials
// grant (RFC 6749 section 4.4) and caches them: a token is used until
// shortly before it expires, or until a caller reports it stale (the API
// answered 401 to it). Concurrent callers that need a new token share one
// token request. Every token obtained is added to the scrubber before any
// caller gets it.
//
// The token request runs in a goroutine of the source, not of the caller
// that started it, so a caller that gives up (its context ends) does not
// fail the others; close cancels it and waits for it.
type tokenSource struct {
	// Fixed at creation.
	cfg     *OAuth2
	client  *http.Client
	timeout time.Duration
	now     func() time.Time
	scrub   *scrub.Scrubber
	log     *slog.Logger
	ctx     context.Context // ended by close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// onJoin, when set (tests), is called when a caller joins a token
	// request already under way.
	onJoin func()

	mu    sync.Mutex
	tok   string    // the current token; guarded by mu
	until time.Time // when tok is to be replaced; zero: not before a 401
	fetch *tokenFetch
}

// A tokenFetch is one token request under way; done closes when tok and
// err are set.
type tokenFetch struct {
	done chan struct{}
	tok  string
	err  error
}

func newTokenSource(cfg *OAuth2, client *http.Client, timeout time.Duration, now func() time.Time, s *scrub.Scrubber, log *slog.Logger) *tokenSource {
	ctx, cancel := context.WithCancel(context.Background())
	return &tokenSource{cfg: cfg, client: client, timeout: timeout, now: now, scrub: s, log: log, ctx: ctx, cancel: cancel}
}

// token returns a token to send: the cached one unless it is due for
// replacement or is stale (the token the API just refused, "" for none),
// else a new one. It returns early with ctx's error when ctx ends.
func (ts *tokenSource) token(ctx context.Context, stale string) (string, error) {
	ts.mu.Lock()
	if ts.tok != "" && ts.tok != stale && (ts.until.IsZero() || ts.now().Before(ts.until)) {
		tok := ts.tok
		ts.mu.Unlock()
		return tok, nil
	}
	f := ts.fetch
	switch {
	case f != nil:
		if ts.onJoin != nil {
			ts.onJoin()
		}
	case ts.ctx.Err() != nil:
		ts.mu.Unlock()
		return "", errors.New("oauth2: the connector is closed")
	default:
		f = &tokenFetch{done: make(chan struct{})}
		ts.fetch = f
		ts.wg.Go(func() { ts.run(f) })
	}
	ts.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// run makes one token request and publishes its outcome.
func (ts *tokenSource) run(f *tokenFetch) {
	ctx, cancel := context.WithTimeout(ts.ctx, ts.timeout)
	defer cancel()
	start := ts.now()
	tok, life, err := ts.request(ctx)
	ts.mu.Lock()
	if err == nil {
		ts.tok, ts.until = tok, time.Time{}
		if life > 0 {
			ts.until = start.Add(life - min(maxRefreshSkew, life/4))
		}
	}
	ts.fetch = nil
	ts.mu.Unlock()
	f.tok, f.err = tok, err
	close(f.done)
}

// close cancels a token request under way and waits for it.
func (ts *tokenSource) close() {
	ts.cancel()
	ts.wg.Wait()
}

// request asks the token endpoint for a token: a form POST of
// grant_type=client_credentials and the scopes, the client authenticated
// with HTTP basic (RFC 6749 section 2.3.1). It returns the token and its
// lifetime (0 when the endpoint gave none). Errors hold the endpoint's
// error code and description, scrubbed, never the rest of its answer.
func (ts *tokenSource) request(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(ts.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(ts.cfg.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, ts.fail(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Basic "+clientCredential(ts.cfg))
	resp, err := ts.client.Do(req)
	if err != nil {
		return "", 0, ts.fail(err)
	}
	a, err := readAnswer(resp, maxTokenResponse)
	if err != nil {
		return "", 0, ts.fail(err)
	}
	fields := tokenFields(a)
	if a.status/100 != 2 {
		msg := fmt.Sprintf("%d %s", a.status, a.reason)
		if code := fields["error"]; code != "" {
			msg += ": " + oneLine(code)
		}
		if desc := fields["error_description"]; desc != "" {
			msg += ": " + oneLine(desc)
		}
		return "", 0, ts.fail(errors.New(msg))
	}
	tok := fields["access_token"]
	if tok == "" {
		return "", 0, ts.fail(errors.New("the answer has no access_token"))
	}
	// Scrubbed from here on, before anyone sees it.
	ts.scrub.Add(tok)
	if err := checkHeader("Authorization", tok); err != nil {
		return "", 0, ts.fail(errors.New("the access_token holds a character a header cannot carry"))
	}
	if typ := fields["token_type"]; typ != "" && !strings.EqualFold(typ, "bearer") {
		return "", 0, ts.fail(fmt.Errorf("token_type %q is not supported (only Bearer is)", oneLine(typ)))
	}
	var life time.Duration
	if s := fields["expires_in"]; s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil || secs < 0 {
			return "", 0, ts.fail(fmt.Errorf("expires_in %q is not a number of seconds", oneLine(s)))
		}
		life = time.Duration(min(secs, 1e9) * float64(time.Second))
	}
	ts.log.Debug("oauth2 token obtained", "token_url", ts.scrub.String(ts.cfg.TokenURL), "expires_in", life)
	return tok, life, nil
}

// fail wraps err as a token request failure, scrubbed.
func (ts *tokenSource) fail(err error) error {
	return ts.scrub.Error(fmt.Errorf("oauth2 token request to %s: %w", ts.cfg.TokenURL, err))
}

// tokenFields returns the string fields of a token endpoint's answer: a
// JSON object (numbers as their text), or a form-encoded body, which some
// endpoints send.
func tokenFields(a *answer) map[string]string {
	out := map[string]string{}
	if classify(a.header.Get("Content-Type")) == classForm {
		q, _ := url.ParseQuery(string(a.body))
		for k := range q {
			out[k] = q.Get(k)
		}
		return out
	}
	v, _ := parseValue(a.body)
	for i, k := range v.keys {
		if v.items[i].scalar() {
			out[k] = v.items[i].text
		}
	}
	return out
}
