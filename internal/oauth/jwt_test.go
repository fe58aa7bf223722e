package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"math/big"
	"testing"
)

// TestJWSSignECDSA checks the ECDSA signatures of private_key_jwt
// assertions: R and S as fixed-size numbers, over the hash each
// algorithm names, verifying with the key's public half.
func TestJWSSignECDSA(t *testing.T) {
	for _, c := range []struct {
		alg   string
		curve elliptic.Curve
		sum   func([]byte) []byte
		size  int
	}{
		{"ES256", elliptic.P256(), func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }, 32},
		{"ES384", elliptic.P384(), func(b []byte) []byte { s := sha512.Sum384(b); return s[:] }, 48},
		{"ES512", elliptic.P521(), func(b []byte) []byte { s := sha512.Sum512(b); return s[:] }, 66},
	} {
		k, err := ecdsa.GenerateKey(c.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := jwsSign(k, c.alg, []byte("header.claims"))
		if err != nil || len(sig) != 2*c.size {
			t.Fatalf("%s: %d bytes, %v; want %d", c.alg, len(sig), err, 2*c.size)
		}
		r, s := new(big.Int).SetBytes(sig[:c.size]), new(big.Int).SetBytes(sig[c.size:])
		if !ecdsa.Verify(&k.PublicKey, c.sum([]byte("header.claims")), r, s) {
			t.Errorf("%s: the signature does not verify", c.alg)
		}
	}
}
