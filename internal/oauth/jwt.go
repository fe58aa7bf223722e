package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	_ "crypto/sha512" // crypto.SHA384 and SHA512
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// assertionLifetime is how long a private_key_jwt assertion is valid.
const assertionLifetime = 5 * time.Minute

// ParsePrivateKey reads a PEM private key for private_key_jwt (RFC 7523
// client authentication): PKCS #8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE
// KEY") or PKCS #1 ("RSA PRIVATE KEY"); ECDSA P-256, P-384 or P-521,
// RSA, or Ed25519. It returns the key and the JWS algorithm it signs with
// (ES256, ES384, ES512, RS256 or EdDSA).
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, string, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, "", errors.New("no PEM block found")
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
		return nil, "", fmt.Errorf("PEM block %q is not a private key (want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, "", fmt.Errorf("PEM block %q: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return k, "ES256", nil
		case elliptic.P384():
			return k, "ES384", nil
		case elliptic.P521():
			return k, "ES512", nil
		}
		return nil, "", fmt.Errorf("ECDSA curve %s is not supported (P-256, P-384 or P-521)", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		return k, "RS256", nil
	case ed25519.PrivateKey:
		return k, "EdDSA", nil
	}
	return nil, "", fmt.Errorf("a %T key is not supported (ECDSA, RSA or Ed25519)", key)
}

// signAssertion makes the JWT a client authenticates with by
// private_key_jwt (RFC 7523 section 2.2): issuer and subject the client's
// id, audience the authorization server, valid for assertionLifetime,
// with a random jti.
func signAssertion(key crypto.Signer, alg, clientID, audience string, now time.Time) (string, error) {
	if key == nil {
		return "", errors.New("private_key_jwt needs a private key (oauth.private_key)")
	}
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": randomString(16),
	})
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sig, err := jwsSign(key, alg, []byte(input))
	if err != nil {
		return "", fmt.Errorf("sign the client assertion: %w", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// jwsSign signs input as JWS algorithm alg says (RFC 7518 section 3; RFC
// 8037 for EdDSA). ECDSA signatures are R and S as fixed-size big-endian
// numbers, not ASN.1.
func jwsSign(key crypto.Signer, alg string, input []byte) ([]byte, error) {
	switch alg {
	case "EdDSA":
		k, ok := key.(ed25519.PrivateKey)
		if !ok {
			return nil, errors.New("EdDSA needs an Ed25519 key")
		}
		return ed25519.Sign(k, input), nil
	case "RS256":
		k, ok := key.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("RS256 needs an RSA key")
		}
		d := sha256.Sum256(input)
		return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
	case "ES256", "ES384", "ES512":
		k, ok := key.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s needs an ECDSA key", alg)
		}
		h, size := crypto.SHA256.New(), 32
		switch alg {
		case "ES384":
			h, size = crypto.SHA384.New(), 48
		case "ES512":
			h, size = crypto.SHA512.New(), 66
		}
		h.Write(input)
		r, s, err := ecdsa.Sign(rand.Reader, k, h.Sum(nil))
		if err != nil {
			return nil, err
		}
		return append(r.FillBytes(make([]byte, size)), s.FillBytes(make([]byte, size))...), nil
	}
	return nil, fmt.Errorf("JWS algorithm %q is not supported", alg)
}
