package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/jws"
)

// assertionLifetime is how long a private_key_jwt assertion is valid.
const assertionLifetime = 5 * time.Minute

// ParsePrivateKey reads a PEM private key for private_key_jwt (RFC 7523
// client authentication): PKCS #8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE
// KEY") or PKCS #1 ("RSA PRIVATE KEY"); ECDSA P-256, P-384 or P-521,
// RSA, or Ed25519, which sign with ES256, ES384, ES512, RS256 or EdDSA
// (jws.AlgOf).
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key (want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("PEM block %q: %w", block.Type, err)
	}
	if k, ok := key.(crypto.Signer); ok && jws.AlgOf(k.Public()) != "" {
		return k, nil
	}
	if k, ok := key.(*ecdsa.PrivateKey); ok {
		return nil, fmt.Errorf("ECDSA curve %s is not supported (P-256, P-384 or P-521)", k.Curve.Params().Name)
	}
	return nil, fmt.Errorf("a %T key is not supported (ECDSA, RSA or Ed25519)", key)
}

// signAssertion makes the JWT a client authenticates with by
// private_key_jwt (RFC 7523 section 2.2): issuer and subject the client's
// id, audience the authorization server, valid for assertionLifetime,
// with a random jti.
func signAssertion(key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	if key == nil {
		return "", errors.New("private_key_jwt needs a private key (oauth.private_key)")
	}
	jwt, err := jws.Sign(key, jws.Header{Alg: jws.AlgOf(key.Public()), Typ: "JWT"}, map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": randomString(16),
	})
	if err != nil {
		return "", fmt.Errorf("sign the client assertion: %w", err)
	}
	return jwt, nil
}
