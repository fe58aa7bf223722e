package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/origin"
)

// Transport returns a RoundTripper that sends requests through base with
// the session's access token, and handles the server's answers to it:
//
//   - 401 with a Bearer challenge (or no challenge at all): without a
//     token, a client credentials session obtains one and sends the request
//     again; any other says a sign-in is needed when a person could make
//     one (signInOffered), else fails with an error wrapping ErrNoSignIn
//     (the server wants a credential of its own). With a token, it is
//     refreshed (once, see Session.refresh) and the request sent again; a
//     second 401 means the server refuses the grant: a sign-in is needed.
//   - 403 insufficient_scope: the scopes asked for are added to those of
//     the next sign-in (a client credentials session asks for them at
//     once), at most maxStepUps times in a row; a token exchange session,
//     which has no sign-in, fails the request saying what to change.
//
// "A sign-in is needed" is an error wrapping *connectors.SignInRequired;
// once known, later requests fail with it at once, without being sent,
// until the store holds usable tokens again. A request that already
// carries an Authorization header (configured by the user) is sent as it
// is, and so is a request to another origin than the server's (the token
// goes nowhere else). A request is sent again only if its body can be had
// again (GetBody).
func (s *Session) Transport(base http.RoundTripper) http.RoundTripper {
	return &transport{s: s, base: base}
}

type transport struct {
	s    *Session
	base http.RoundTripper
}

// maxSends bounds the sends of one request: the first, one after a
// refresh or a client credentials token, and the step-ups.
const maxSends = 2 + maxStepUps

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" || !origin.Same(req.URL, t.s.su) {
		// The user's own credential; or another origin (an SSE server's
		// message endpoint elsewhere, a redirect), which never gets the
		// server's token.
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	s := t.s
	tok, err := s.accessToken(ctx)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // as a RoundTripper must, even when it fails
		}
		return nil, err
	}
	for sends := 1; ; sends++ {
		r := req.Clone(ctx)
		if sends > 1 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, errors.New("the request cannot be sent again with a new token (its body cannot be read twice)")
			}
			if r.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		next, err := s.answered(ctx, resp, tok, sends)
		if err == nil && next == "" {
			return resp, nil
		}
		discard(resp)
		if err != nil {
			return nil, err
		}
		tok = next
	}
}

// answered looks at the server's answer to a request sent with tok (the
// sends-th send) and returns the token to send it again with, or "" to
// keep the answer, or the error to report instead.
func (s *Session) answered(ctx context.Context, resp *http.Response, tok string, sends int) (string, error) {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		values := resp.Header.Values("WWW-Authenticate")
		ch := bearerChallenge(values)
		if !ch.found && len(values) > 0 {
			return "", nil // another scheme: not ours to answer
		}
		s.mu.Lock()
		s.challenge = ch
		s.mu.Unlock()
		switch {
		case sends >= maxSends:
			return "", s.needSignIn("the server keeps refusing the tokens")
		case tok == "" && s.cfg.Grant != GrantClientCredentials:
			// The server wants a token: a person must sign in, unless
			// another process did since the store was read (accessToken
			// reads it again, and sends its token).
			reason := "not signed in yet"
			if s.cfg.Grant == GrantTokenExchange {
				reason = s.noSubjectToken()
			} else if err := s.signInOffered(ctx, Refusal(values)); err != nil {
				return "", err
			}
			s.mu.Lock()
			s.need = reason
			s.mu.Unlock()
			return s.accessToken(ctx)
		case sends > 1:
			// Refused right after a refresh or a new token: the grant is no
			// good.
			if g, raw, err := s.load(ctx); err == nil && g != nil && g.AccessToken == tok {
				return "", s.refuse(ctx, g, raw, "the server refused a new access token")
			}
			return "", s.needSignIn("the server refused a new access token")
		}
		// A new token: refreshed, or, for a client credentials session,
		// asked for again.
		return s.refresh(ctx, tok)
	case http.StatusForbidden:
		ch := bearerChallenge(resp.Header.Values("WWW-Authenticate"))
		if ch.err != "insufficient_scope" {
			return "", nil
		}
		return s.insufficientScope(ctx, ch, tok)
	}
	if resp.StatusCode/100 == 2 {
		s.mu.Lock()
		s.stepUps, s.scopeRefused = 0, ""
		s.mu.Unlock()
	}
	return "", nil
}

// insufficientScope handles a 403 insufficient_scope to a request sent
// with tok: the scopes it asks for join those held; a client credentials
// session asks for them at once, any other needs a sign-in with them.
// When maxStepUps new tokens in a row were refused so, the server is
// taken to never grant what it asks for (the same token refused again
// counts once). A token exchange session has no sign-in to ask for more
// with, and trades for the configured scopes only: the answer is an
// error saying what the operator can change, and nothing is remembered
// (the next call is sent, once, as if the server had not asked).
func (s *Session) insufficientScope(ctx context.Context, ch bearer, tok string) (string, error) {
	asks := "it names no scope"
	if len(ch.scopes) > 0 {
		asks = "it asks for " + clip(strings.Join(ch.scopes, " "))
	}
	if s.cfg.Grant == GrantTokenExchange {
		asked := "none"
		if len(s.cfg.Scopes) > 0 {
			asked = clip(strings.Join(s.cfg.Scopes, " "))
		}
		return "", s.errorf("the server answers 403 insufficient_scope (%s) to the token exchanged for %s (the exchange asks for %s); no sign-in can add scopes: "+
			"add those the server needs to the connector's credentials.scopes, or have its authorization server grant them on exchange", asks, s.cfg.Account, asked)
	}
	s.mu.Lock()
	var held []string
	if s.cur != nil {
		held = s.cur.Scopes
	}
	want := union(held, s.needScopes, ch.scopes)
	if tok == "" || tok != s.scopeRefused {
		s.stepUps++
		s.scopeRefused = tok
	}
	steps := s.stepUps
	if steps > maxStepUps {
		s.stepUps, s.scopeRefused = 0, ""
		s.mu.Unlock()
		// Signing in again would not help.
		return "", s.errorf("the server still answers 403 insufficient_scope (%s) after %d step-up(s); giving up", asks, steps-1)
	}
	s.needScopes = want
	s.mu.Unlock()
	s.log.Info("the server needs more scopes", "scopes", strings.Join(ch.scopes, " "), "step", steps)
	if s.cfg.Grant == GrantClientCredentials {
		return s.refresh(ctx, tok)
	}
	return "", s.needSignIn("the server needs the scopes " + clip(strings.Join(want, " ")))
}

// discard reads a little of a response (so its connection can be reused)
// and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}
