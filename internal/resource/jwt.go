package resource

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/jws"
)

// verifyJWT verifies a JWT access token's signature with the issuer's
// key and then its claims.
func (v *Validator) verifyJWT(ctx context.Context, token string, h jws.Header) (*codemode.Principal, error) {
	var c claims
	if err := v.verify(ctx, token, h, "token", &c); err != nil {
		return nil, err
	}
	return v.check(&c, true)
}

// verify verifies a JWS's signature with the issuer's key (an access
// token's, or an ID token's: what names it) and decodes its payload, not
// yet checked, into claims.
func (v *Validator) verify(ctx context.Context, token string, h jws.Header, what string, claims any) error {
	if !slices.Contains(jws.Algorithms, h.Alg) {
		return fmt.Errorf("%w: the %s is signed with an algorithm this server does not accept (alg)", ErrInvalid, what)
	}
	if len(h.Crit) > 0 {
		return fmt.Errorf("%w: the %s has critical header parameters this server does not understand (crit)", ErrInvalid, what)
	}
	key, err := v.key(ctx, h, what)
	if err != nil {
		return err
	}
	payload, ok := jws.Verify(token, h.Alg, key)
	if !ok {
		return fmt.Errorf("%w: the %s's signature does not verify with the issuer's key", ErrInvalid, what)
	}
	if err := decodeClaims(payload, claims, what); errors.Is(err, ErrInvalid) {
		return err
	} else if err != nil {
		return fmt.Errorf("%w: the %s's claims are not a JSON object of the expected types", ErrInvalid, what)
	}
	return nil
}

// keySet is the issuer's keys as fetched.
type keySet struct {
	keys    []jwk
	fetched time.Time
}

// jwk is one usable key of a JWK Set.
type jwk struct {
	kid string
	alg string // "" when the set did not say
	key crypto.PublicKey
}

// find returns the key for a header: the only key that has its kid (any,
// for a header without one) and fits its alg (a set may publish an RSA
// and an EC key under one kid).
func (s *keySet) find(h jws.Header) (crypto.PublicKey, bool) {
	if s == nil {
		return nil, false
	}
	var found crypto.PublicKey
	n := 0
	for _, k := range s.keys {
		if (h.Kid == "" || k.kid == h.Kid) && (k.alg == "" || k.alg == h.Alg) && jws.Fits(h.Alg, k.key) {
			found, n = k.key, n+1
		}
	}
	return found, n == 1
}

// key returns the issuer's key that signed a token (what names it) with
// header h. Keys are fetched on first use, when they are older than
// KeysMaxAge, and when h names a key id they lack; every fetch but the
// first good one waits RefetchInterval after the last (a flood of tokens
// with made-up key ids, or an issuer whose keys cannot be fetched, costs
// the issuer one request each interval, and its metadata another, and
// the tokens meanwhile get the old keys or the last failure); a token
// the old keys serve does not wait for a fetch another token started.
func (v *Validator) key(ctx context.Context, h jws.Header, what string) (crypto.PublicKey, error) {
	now := v.cfg.Now()
	v.mu.Lock()
	ks, err := v.heldLocked()
	fetches, due := v.fetches, now.Sub(v.refetched) >= RefetchInterval
	v.mu.Unlock()
	k, ok := ks.find(h)
	if due && (ks == nil || now.Sub(ks.fetched) >= KeysMaxAge || !ok) {
		var got *keySet
		if got, err = v.fetchKeys(ctx, fetches, !ok); got != nil {
			k, ok = got.find(h)
		}
	}
	switch {
	case err != nil:
		return nil, err
	case ok:
		return k, nil
	}
	return nil, fmt.Errorf("%w: the %s is signed with a key the issuer does not publish (kid)", ErrInvalid, what)
}

// fetchKeys fetches the issuer's JWK Set, unless another Validate did
// since this one counted fetches; it returns the keys then held (the old
// ones when the fetch failed and there are some). Unless wait is set (the
// caller lacks its key), it returns nil at once when another Validate is
// fetching them: a caller the old keys serve does not wait on a slow
// issuer. It reads the metadata first when it is KeysMaxAge old, or
// RefetchInterval old for a caller lacking its key (the issuer may have
// moved its keys to another jwks_uri).
func (v *Validator) fetchKeys(ctx context.Context, fetches int, wait bool) (*keySet, error) {
	if wait {
		v.fetchMu.Lock()
	} else if !v.fetchMu.TryLock() {
		return nil, nil
	}
	defer v.fetchMu.Unlock()
	v.mu.Lock()
	if v.fetches != fetches { // another Validate fetched them while this one waited
		defer v.mu.Unlock()
		return v.heldLocked()
	}
	v.mu.Unlock()
	maxAge := KeysMaxAge
	if wait {
		maxAge = RefetchInterval
	}
	meta, err := v.metadata(ctx, maxAge)
	if err != nil {
		return nil, err
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("%w: the token is a JWT, but the issuer's metadata (%s) names no jwks_uri to verify it with", ErrInvalid, meta.Where)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	_, ferr := v.fetch.JSON(ctx, meta.JWKSURI, "the issuer's JWK Set", &set)
	if ferr != nil && ctx.Err() != nil {
		return nil, ferr // this caller gave up: no failure of the issuer's, not counted
	}
	now := v.cfg.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fetches++
	if v.keys != nil || ferr != nil { // (the first good fetch does not count, so that a rotation right after it is seen)
		v.refetched = now
	}
	if ferr != nil {
		v.cfg.Logger.Warn("server.auth: cannot fetch the issuer's keys", "jwks_uri", meta.JWKSURI, "err", ferr)
		v.keysErr = fmt.Errorf("the issuer's keys: %w", ferr)
		return v.heldLocked()
	}
	ks := &keySet{fetched: now}
	for i, raw := range set.Keys {
		k, err := parseJWK(raw)
		if err != nil {
			v.cfg.Logger.Debug("server.auth: a key of the issuer's JWK Set is skipped", "index", i, "err", err)
			continue
		}
		ks.keys = append(ks.keys, k)
	}
	v.keys, v.keysErr = ks, nil
	return ks, nil
}

// heldLocked returns the keys held, or why there are none (v.mu is
// held).
func (v *Validator) heldLocked() (*keySet, error) {
	if v.keys == nil {
		return nil, v.keysErr
	}
	return v.keys, nil
}

// minRSABits and maxRSABits bound the RSA keys accepted: a key of the
// issuer's over the bound would make every token naming it, however
// forged, cost a long verification (about 0.1 s at 65,536 bits).
const (
	minRSABits = 2048
	maxRSABits = 8192
)

// parseJWK reads one key of a JWK Set (RFC 7517, 7518, 8037): an RSA,
// EC (P-256, P-384, P-521) or OKP (Ed25519) public key for signatures.
func parseJWK(raw json.RawMessage) (jwk, error) {
	var k struct {
		Kty, Kid, Alg, Use, Crv string
		N, E, X, Y              string
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return jwk{}, err
	}
	if k.Use != "" && k.Use != "sig" {
		return jwk{}, fmt.Errorf("use %q is not sig", k.Use)
	}
	b64 := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	out := jwk{kid: k.Kid, alg: k.Alg}
	switch k.Kty {
	case "RSA":
		n, err1 := b64(k.N)
		e, err2 := b64(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return jwk{}, errors.New("RSA key: bad n or e")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if bits := pub.N.BitLen(); bits < minRSABits || bits > maxRSABits {
			return jwk{}, fmt.Errorf("RSA key of %d bits (%d to %d)", bits, minRSABits, maxRSABits)
		}
		out.key = pub
	case "EC":
		curve := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}[k.Crv]
		x, err1 := b64(k.X)
		y, err2 := b64(k.Y)
		if curve == nil || err1 != nil || err2 != nil || len(x) != (curve.Params().BitSize+7)/8 {
			return jwk{}, fmt.Errorf("EC key: curve %q, or bad x or y", k.Crv)
		}
		// ecdsa.ParseUncompressedPublicKey checks y's length and that the
		// point is on the curve.
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return jwk{}, fmt.Errorf("EC key: %w", err)
		}
		out.key = pub
	case "OKP":
		x, err := b64(k.X)
		if k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return jwk{}, errors.New("OKP key: only Ed25519")
		}
		out.key = ed25519.PublicKey(x)
	default:
		return jwk{}, fmt.Errorf("kty %q", k.Kty)
	}
	return out, nil
}
