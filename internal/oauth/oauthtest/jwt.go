package oauthtest

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"maps"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/jws"
)

// Key is a signing key of the authorization server, published in its JWK
// Set under Kid until RotateKey replaces it.
type Key struct {
	Kid string
	RSA *rsa.PrivateKey
	EC  *ecdsa.PrivateKey
}

// NewKey makes a key pair (RSA 2048 and ECDSA P-256) under kid: the
// server's own (keys), or another's that it does not publish, for a
// token "signed by another key".
func NewKey(kid string) *Key {
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return &Key{Kid: kid, RSA: r, EC: e}
}

// keyLocked returns the current key, made on first use. f.mu is held.
func (f *Server) keyLocked() *Key {
	if f.key == nil {
		f.key = NewKey(f.id("kid"))
	}
	return f.key
}

// RotateKey replaces the server's signing key with a new one (a new kid);
// the JWK Set publishes the new key only from then on.
func (f *Server) RotateKey() *Key {
	k := NewKey("")
	f.mu.Lock()
	defer f.mu.Unlock()
	k.Kid = f.id("kid")
	f.key = k
	return k
}

// SignJWT returns a JWT access token with claims, signed by the server's
// current key with alg (RS256, PS256 or ES256). Claims it leaves out get
// the defaults of a good token: iss the issuer, sub "alice", aud the
// resource server's /mcp, exp in an hour, scope none.
func (f *Server) SignJWT(alg string, claims map[string]any) string {
	f.mu.Lock()
	k := f.keyLocked()
	c := map[string]any{"iss": f.Issuer(), "sub": "alice", "aud": f.ServerURL(), "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	f.mu.Unlock()
	return Sign(k, alg, override(c, claims))
}

// Sign makes a JWT of claims signed by k with alg ("none": unsigned).
func Sign(k *Key, alg string, claims map[string]any) string {
	h := jws.Header{Alg: alg, Typ: "at+jwt"}
	if k != nil {
		h.Kid = k.Kid
	}
	if alg == "none" {
		input, _ := jws.Encode(h, claims)
		return input + "."
	}
	var key crypto.Signer = k.RSA
	if strings.HasPrefix(alg, "ES") {
		key = k.EC
	}
	tok, err := jws.Sign(key, h, claims)
	if err != nil {
		panic("oauthtest.Sign: " + err.Error())
	}
	return tok
}

// serveJWKS answers the JWK Set: the current key's public keys. f.mu is
// held.
func (f *Server) serveJWKS(w http.ResponseWriter) {
	k, b64 := f.keyLocked(), base64.RawURLEncoding.EncodeToString
	writeJSON(w, map[string]any{"keys": []map[string]any{
		{"kty": "RSA", "kid": k.Kid, "use": "sig", "n": b64(k.RSA.N.Bytes()), "e": b64(big.NewInt(int64(k.RSA.E)).Bytes())},
		{"kty": "EC", "kid": k.Kid, "use": "sig", "crv": "P-256", "x": b64(k.EC.X.FillBytes(make([]byte, 32))), "y": b64(k.EC.Y.FillBytes(make([]byte, 32)))},
	}})
}

// IssueOpaque makes an opaque access token whose introspection answers
// claims with active true (iss the issuer unless claims say otherwise).
func (f *Server) IssueOpaque(claims map[string]any) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok := f.next("opaque")
	c := map[string]any{"active": true, "iss": f.Issuer()}
	maps.Copy(c, claims)
	f.opaque[tok] = c
	return tok
}

// Deactivate makes introspection call token inactive from now on.
func (f *Server) Deactivate(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.opaque, token)
	delete(f.access, token)
}

// introspect answers a token introspection request (RFC 7662): the
// claims of an opaque token IssueOpaque made, or of an access token the
// token endpoint issued, else active false. With IntrospectClientID set,
// the request must authenticate as it (client_secret_basic). f.mu is held.
func (f *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if f.IntrospectClientID != "" {
		id, secret, ok := r.BasicAuth()
		if !ok || id != f.IntrospectClientID || secret != f.IntrospectClientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]string{"error": "invalid_client"})
			return
		}
	}
	_ = r.ParseForm()
	tok := r.PostForm.Get("token")
	if c, ok := f.opaque[tok]; ok {
		writeJSON(w, c)
		return
	}
	if scopes, ok := f.access[tok]; ok {
		writeJSON(w, map[string]any{"active": true, "iss": f.Issuer(), "sub": "alice", "aud": f.ServerURL(), "scope": strings.Join(scopes, " ")})
		return
	}
	writeJSON(w, map[string]any{"active": false})
}

// CurrentKey returns the key the server signs with now (made on first
// use).
func (f *Server) CurrentKey() *Key { return locked(f, func() *Key { return f.keyLocked() }) }

// personClaims are the claims of the person a code was issued for (sub
// "alice" when the test chose nobody).
func personClaims(g codeGrant) map[string]any {
	c := map[string]any{"sub": "alice"}
	maps.Copy(c, g.person)
	return c
}

// override applies a test's overrides to claims (nil removes one).
func override(c, with map[string]any) map[string]any {
	for k, v := range with {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// idTokenLocked makes the OpenID Connect ID token of code grant g: iss,
// the person's sub, name and email, aud the client, the nonce of the
// authorization request, an hour's exp; IDTokenClaims override. f.mu is
// held.
func (f *Server) idTokenLocked(g codeGrant) string {
	p := personClaims(g)
	c := map[string]any{"iss": f.Issuer(), "sub": p["sub"], "aud": g.clientID, "nonce": g.nonce,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for _, k := range []string{"name", "email"} {
		if v, ok := p[k]; ok {
			c[k] = v
		}
	}
	tok := Sign(f.keyLocked(), "RS256", override(c, f.IDTokenClaims))
	f.secrets = append(f.secrets, tok)
	return tok
}

// accessJWTLocked makes a JWT access token for code grant g: iss, the
// person's claims, aud the request's audience (else its resource), its
// scopes, the client, an hour's exp; AccessTokenClaims override. f.mu is
// held.
func (f *Server) accessJWTLocked(g codeGrant) string {
	c := personClaims(g)
	aud := cmp.Or(g.audience, g.resource)
	c["iss"], c["aud"], c["scope"], c["client_id"] = f.Issuer(), aud, strings.Join(g.scopes, " "), g.clientID
	c["exp"], c["iat"] = time.Now().Add(time.Hour).Unix(), time.Now().Unix()
	return Sign(f.keyLocked(), "RS256", override(c, f.AccessTokenClaims))
}
