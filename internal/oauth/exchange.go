package oauth

import "context"

// RFC 8693's grant type and token type.
const (
	tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType    = "urn:ietf:params:oauth:token-type:access_token"
)

// Exchange makes sure the session holds a usable token of the server for
// its person (Config.Account): when the stored one is missing, refused or
// due, it trades subjectToken, the person's own access token at the
// team's issuer, for a new one at Config.TokenEndpoint (RFC 8693: the
// server's URL as resource, Config.Audience and Config.Scopes when set),
// and stores it sealed, as any grant. subjectToken is sent to the token
// endpoint only, and never kept. Concurrent callers share one exchange
// (the first caller's token is traded: a session is one person's). A
// session of another grant does nothing.
func (s *Session) Exchange(ctx context.Context, subjectToken string) error {
	if s.cfg.Grant != GrantTokenExchange || subjectToken == "" {
		return nil
	}
	s.mu.Lock()
	cur, need := s.cur, s.need
	s.mu.Unlock()
	if cur != nil && need == "" && cur.usable() && !cur.due(s.cfg.Now()) {
		return nil // (what this process holds: no store read for each call)
	}
	_, err := s.exchanges.Do(ctx, func(ctx context.Context) (struct{}, error) {
		// As a refresh's: a store that hangs must not hold the person's
		// later exchanges, which wait for this one, for ever.
		ctx, cancel := context.WithTimeout(ctx, leaseTime+s.cfg.Timeout)
		defer cancel()
		return struct{}{}, s.exchange(ctx, subjectToken)
	})
	return err
}

// exchange is Exchange's run: it reads the store again (another process,
// or the exchange just before, may have stored a usable token) and
// trades subjectToken unless it holds one.
func (s *Session) exchange(ctx context.Context, subjectToken string) error {
	g, err := s.reload(ctx)
	if err != nil {
		return err
	}
	if g != nil && g.usable() && !g.due(s.cfg.Now()) {
		return nil
	}
	s.subject.Set(subjectToken)
	form := tokenForm(tokenExchangeGrant, s.server, s.cfg.Scopes, "subject_token", subjectToken,
		"subject_token_type", accessTokenType, "requested_token_type", accessTokenType, "audience", s.cfg.Audience)
	d := &discovery{resource: s.server, meta: IssuerMetadata{TokenEndpoint: s.cfg.TokenEndpoint}}
	auth, err := s.configuredAuth(d)
	if err != nil {
		return err
	}
	if _, err := s.obtain(ctx, "exchanging the person's token", form, d, auth, s.cfg.Scopes); err != nil {
		return err
	}
	s.mu.Lock()
	s.need = ""
	s.mu.Unlock()
	return nil
}

// noSubjectToken is the reason a token exchange session needs its person:
// it holds no usable token of the server, and the request is not the
// person's own, so there is no token of theirs to trade. It is text only
// (connectors.SignInRequired's Reason, which the catalog scrubs and
// rebuilds): nothing matches it with errors.Is.
func (s *Session) noSubjectToken() string {
	return "the person's own token is not at hand: " + s.cfg.Account + " resumes the run (or runs it again) to trade it for a token of this server"
}
