package resource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// flight is an introspection under way, which the Validates of its token
// that arrive meanwhile wait for rather than each asking the issuer.
type flight struct {
	done   chan struct{} // closed when p and err are set
	p      *codemode.Principal
	err    error
	gaveUp bool // the Validate that asked gave up: its error is its own
}

// introspect asks the issuer about a token that is not a JWT (RFC 7662),
// through the caches of its answers (active, and refusing: a client that
// repeats a bad token costs the issuer one introspection each CacheTTL;
// apart, so that a flood of bad tokens does not push out good ones). One introspection of a token is
// under way at a time: a burst of requests with one opaque token costs
// the issuer one request, not one each. A Validate waiting for another's
// stops when its own context ends, and asks itself when the other gave up.
// At most MaxIntrospections are under way at once, all tokens together, so
// that a flood of distinct opaque tokens does not make as many requests to
// the issuer at once: a Validate waits for room until its context ends.
func (v *Validator) introspect(ctx context.Context, token string) (*codemode.Principal, error) {
	if v.cfg.ClientID == "" && v.cfg.IntrospectionEndpoint == "" {
		return nil, fmt.Errorf("%w: the token is not a JWT, and this server has no client to introspect it with (server.auth.introspection)", ErrInvalid)
	}
	sum := sha256.Sum256([]byte(token))
	for {
		now := v.cfg.Now()
		v.mu.Lock()
		for _, m := range []map[[sha256.Size]byte]cached{v.cache, v.refused} {
			// (an expired answer stays until remember makes room or replaces it)
			if hit, ok := m[sum]; ok && now.Before(hit.expires) {
				v.mu.Unlock()
				return hit.p, hit.err
			}
		}
		f := v.flights[sum]
		if f == nil {
			f = &flight{done: make(chan struct{})}
			v.flights[sum] = f
			v.mu.Unlock()
			f.p, f.err = v.introspectNow(ctx, token, sum, now)
			f.gaveUp = ctx.Err() != nil
			v.mu.Lock()
			delete(v.flights, sum)
			v.mu.Unlock()
			close(f.done)
			return f.p, f.err
		}
		v.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("token introspection: %w", ctx.Err())
		}
		if !f.gaveUp {
			return f.p, f.err
		}
	}
}

// introspectNow asks the issuer about token (of SHA-256 sum) and caches
// its answer.
func (v *Validator) introspectNow(ctx context.Context, token string, sum [sha256.Size]byte, now time.Time) (*codemode.Principal, error) {
	select {
	case v.introspections <- struct{}{}:
		defer func() { <-v.introspections }()
	case <-ctx.Done():
		return nil, fmt.Errorf("token introspection: waiting for one of the %d under way to end: %w", MaxIntrospections, ctx.Err())
	}
	endpoint := v.cfg.IntrospectionEndpoint
	if endpoint == "" {
		meta, err := v.metadata(ctx, KeysMaxAge)
		if err != nil {
			return nil, err
		}
		if meta.IntrospectionEndpoint == "" {
			return nil, fmt.Errorf("the issuer's metadata (%s) names no introspection_endpoint (set server.auth.introspection.endpoint)", meta.Where)
		}
		endpoint = meta.IntrospectionEndpoint
	}
	status, body, err := v.fetch.Introspect(ctx, endpoint, token, v.cfg.ClientID, v.cfg.ClientSecret)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("token introspection at %s answered %d (is server.auth.introspection's client allowed to introspect?)", endpoint, status)
	}
	var c claims
	err = decodeClaims(body, &c, "introspection answer")
	switch {
	case err != nil && !errors.Is(err, ErrInvalid):
		return nil, fmt.Errorf("token introspection at %s: the answer is not a JSON object of the expected types", endpoint)
	case err == nil && (c.Active == nil || !*c.Active):
		err = fmt.Errorf("%w: the token is not active (expired, revoked or unknown to the issuer)", ErrInvalid)
	}
	var p *codemode.Principal
	if err == nil {
		p, err = v.check(&c, false)
	}
	if err != nil { // (an answer refusing the token: ErrInvalid)
		v.remember(v.refused, sum, cached{err: err, expires: now.Add(CacheTTL)}, now)
		return nil, err
	}
	expires := now.Add(CacheTTL)
	if c.Exp != nil && c.Exp.time().Before(expires) {
		expires = c.Exp.time()
	}
	v.remember(v.cache, sum, cached{p: p, expires: expires}, now)
	return p, nil
}

// remember caches an answer in m (v.cache or v.refused), making room
// when it holds CacheSize: expired entries go first, then an arbitrary
// one (map order), which costs that token one more introspection.
func (v *Validator) remember(m map[[sha256.Size]byte]cached, sum [sha256.Size]byte, c cached, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(m) >= CacheSize {
		maps.DeleteFunc(m, func(_ [sha256.Size]byte, old cached) bool { return !now.Before(old.expires) })
	}
	for k := range m {
		if len(m) < CacheSize {
			break
		}
		delete(m, k)
	}
	m[sum] = c
}
