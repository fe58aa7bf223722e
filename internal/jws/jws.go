// Package jws signs and verifies JSON Web Signatures in compact
// serialisation (RFC 7515) with the asymmetric algorithms of RFC 7518 and
// RFC 8037. It is the one implementation behind the OAuth client's
// private_key_jwt assertions (internal/oauth), the resource server's
// access and ID tokens (internal/resource) and the test authorization
// server's tokens (internal/oauth/oauthtest). Standard library only.
package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256" // crypto.SHA256
	_ "crypto/sha512" // crypto.SHA384, crypto.SHA512
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Algorithms are the algorithms this package signs and verifies with:
// RSA PKCS #1 v1.5 and PSS, ECDSA on P-256, P-384 and P-521, and Ed25519.
// Never "none", never an HMAC (a public key would verify it).
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// A Header is a JWS header (RFC 7515 section 4).
type Header struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid,omitempty"`
	Typ  string   `json:"typ,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// b64 is the base64url of JWS, without padding.
var b64 = base64.RawURLEncoding

// Encode is the signing input of header h and claims (as JSON): the two
// base64url parts before the signature.
func Encode(h Header, claims any) (string, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("the claims: %w", err)
	}
	return b64.EncodeToString(hb) + "." + b64.EncodeToString(cb), nil
}

// Sign returns the JWS of claims with header h, signed by key with
// h.Alg, which must be one of Algorithms and fit the key (Fits). ECDSA
// signatures are R and S as fixed-size big-endian numbers, not ASN.1.
func Sign(key crypto.Signer, h Header, claims any) (string, error) {
	if key == nil || !Fits(h.Alg, key.Public()) {
		return "", fmt.Errorf("JWS algorithm %q does not sign with a %T key", h.Alg, key)
	}
	input, err := Encode(h, claims)
	if err != nil {
		return "", err
	}
	var sig []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	case *rsa.PrivateKey:
		hash := hashOf(h.Alg)
		if h.Alg[0] == 'P' {
			sig, err = rsa.SignPSS(rand.Reader, k, hash, digest(hash, input), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, hash, digest(hash, input))
		}
	case *ecdsa.PrivateKey:
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, k, digest(hashOf(h.Alg), input)); err == nil {
			size := (k.Curve.Params().BitSize + 7) / 8
			sig = append(r.FillBytes(make([]byte, size)), s.FillBytes(make([]byte, size))...)
		}
	}
	if err != nil {
		return "", fmt.Errorf("sign with %s: %w", h.Alg, err)
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// Parse reports whether token has the form of a JWS in compact
// serialisation (three base64url parts, the first a JSON object with an
// alg) and returns its header. It verifies nothing.
func Parse(token string) (Header, bool) {
	head, _, ok := strings.Cut(token, ".")
	if !ok || strings.Count(token, ".") != 2 {
		return Header{}, false
	}
	raw, err := b64.DecodeString(head)
	if err != nil {
		return Header{}, false
	}
	var h Header
	if json.Unmarshal(raw, &h) != nil || h.Alg == "" {
		return Header{}, false
	}
	return h, true
}

// Verify checks that the compact JWS token (which Parse took) is signed
// with alg by key, and returns its payload, the claims as sent.
func Verify(token, alg string, key crypto.PublicKey) ([]byte, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !Fits(alg, key) {
		return nil, false
	}
	input := parts[0] + "." + parts[1]
	sig, err1 := b64.DecodeString(parts[2])
	payload, err2 := b64.DecodeString(parts[1])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	ok := false
	switch k := key.(type) {
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, []byte(input), sig)
	case *rsa.PublicKey:
		hash := hashOf(alg)
		if alg[0] == 'P' {
			ok = rsa.VerifyPSS(k, hash, digest(hash, input), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		} else {
			ok = rsa.VerifyPKCS1v15(k, hash, digest(hash, input), sig) == nil
		}
	case *ecdsa.PublicKey:
		if size := (k.Curve.Params().BitSize + 7) / 8; len(sig) == 2*size {
			r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
			ok = ecdsa.Verify(k, digest(hashOf(alg), input), r, s)
		}
	}
	if !ok {
		return nil, false
	}
	return payload, true
}

// Fits reports whether key (a public key) goes with alg: an RSA key for
// RS* and PS*, an ECDSA key on alg's own curve for ES*, Ed25519 for
// EdDSA. An algorithm not among Algorithms fits no key.
func Fits(alg string, key crypto.PublicKey) bool {
	if !slices.Contains(Algorithms, alg) {
		return false
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		curve := map[string]elliptic.Curve{"ES256": elliptic.P256(), "ES384": elliptic.P384(), "ES512": elliptic.P521()}[alg]
		return curve != nil && k.Curve == curve
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// AlgOf is the algorithm key (a public key) signs with: ES256, ES384 or
// ES512 by its curve, RS256 for RSA, EdDSA for Ed25519; "" for another.
func AlgOf(key crypto.PublicKey) string {
	for _, alg := range []string{"ES256", "ES384", "ES512", "RS256", "EdDSA"} {
		if Fits(alg, key) {
			return alg
		}
	}
	return ""
}

// hashOf is the hash of an RS, PS or ES algorithm: SHA-256, -384 or -512
// as its digits say (0 for another).
func hashOf(alg string) crypto.Hash {
	return map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}[strings.TrimLeft(alg, "RPES")]
}

func digest(h crypto.Hash, input string) []byte {
	d := h.New()
	d.Write([]byte(input))
	return d.Sum(nil)
}
