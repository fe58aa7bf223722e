package resource

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// introspect asks the issuer about a token that is not a JWT (RFC 7662),
// through the cache of active answers.
func (v *Validator) introspect(ctx context.Context, token string) (*codemode.Principal, error) {
	if v.cfg.ClientID == "" && v.cfg.IntrospectionEndpoint == "" {
		return nil, fmt.Errorf("%w: the token is not a JWT, and this server has no client to introspect it with (server.auth.introspection)", ErrInvalid)
	}
	sum := sha256.Sum256([]byte(token))
	now := v.cfg.Now()
	v.mu.Lock()
	hit, ok := v.cache[sum] // (an expired answer stays until remember makes room or replaces it)
	v.mu.Unlock()
	if ok && now.Before(hit.expires) {
		return hit.p, nil
	}

	endpoint := v.cfg.IntrospectionEndpoint
	if endpoint == "" {
		meta, err := v.metadata(ctx)
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
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("token introspection at %s: the answer is not a JSON object of the expected types", endpoint)
	}
	if c.Active == nil || !*c.Active {
		return nil, fmt.Errorf("%w: the token is not active (expired, revoked or unknown to the issuer)", ErrInvalid)
	}
	p, err := v.check(&c, false)
	if err != nil {
		return nil, err
	}
	expires := now.Add(CacheTTL)
	if c.Exp != nil && c.Exp.time().Before(expires) {
		expires = c.Exp.time()
	}
	v.remember(sum, cached{p: p, expires: expires}, now)
	return p, nil
}

// remember caches an active answer, making room when the cache is full:
// expired entries go first, then an arbitrary one (map order), which
// costs that token one more introspection.
func (v *Validator) remember(sum [sha256.Size]byte, c cached, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= CacheSize {
		maps.DeleteFunc(v.cache, func(_ [sha256.Size]byte, old cached) bool { return !now.Before(old.expires) })
	}
	for k := range v.cache {
		if len(v.cache) < CacheSize {
			break
		}
		delete(v.cache, k)
	}
	v.cache[sum] = c
}
