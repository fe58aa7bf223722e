package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// Every algorithm signs and verifies round trip; a signature verifies
// with its own algorithm and key only, and not once the token is altered.
func TestSignVerify(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	keys := map[string]crypto.Signer{"RS256": rsaKey, "RS384": rsaKey, "RS512": rsaKey, "PS256": rsaKey, "PS384": rsaKey, "PS512": rsaKey,
		"ES256": p256, "ES384": p384, "ES512": p521, "EdDSA": ed}
	for _, alg := range Algorithms {
		tok, err := Sign(keys[alg], Header{Alg: alg, Kid: "k1"}, map[string]any{"sub": "alice"})
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		h, ok := Parse(tok)
		if !ok || h.Alg != alg || h.Kid != "k1" {
			t.Fatalf("%s: Parse = %+v, %v", alg, h, ok)
		}
		payload, ok := Verify(tok, alg, keys[alg].Public())
		var c map[string]string
		if !ok || json.Unmarshal(payload, &c) != nil || c["sub"] != "alice" {
			t.Errorf("%s: Verify = %s, %v", alg, payload, ok)
		}
		for other, k := range keys {
			same := k.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(keys[alg].Public())
			if _, ok := Verify(tok, alg, k.Public()); ok && !same {
				t.Errorf("%s verifies with %s's key", alg, other)
			}
		}
		if _, ok := Verify(strings.Replace(tok, ".", ".e30", 1), alg, keys[alg].Public()); ok {
			t.Errorf("%s: an altered token verifies", alg)
		}
	}
	for alg, k := range map[string]crypto.Signer{"ES256": p256, "ES384": p384, "ES512": p521, "RS256": rsaKey, "EdDSA": ed} {
		if got := AlgOf(k.Public()); got != alg {
			t.Errorf("AlgOf(%T) = %q, want %q", k, got, alg)
		}
	}
	if p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader); AlgOf(p224.Public()) != "" {
		t.Error("a P-224 key has an algorithm")
	}
	if _, err := Sign(p256, Header{Alg: "RS256"}, nil); err == nil {
		t.Error("RS256 signs with an ECDSA key")
	}
	if _, err := Sign(p256, Header{Alg: "ES384"}, nil); err == nil {
		t.Error("ES384 signs with a P-256 key")
	}
	for _, alg := range []string{"none", "HS256", "RS1", ""} {
		if Fits(alg, &rsaKey.PublicKey) {
			t.Errorf("%q fits an RSA key", alg)
		}
	}
}

// ECDSA signatures are R and S as fixed-size numbers, over the hash each
// algorithm names, verifying with the key's public half.
func TestSignECDSA(t *testing.T) {
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
		tok, err := Sign(k, Header{Alg: c.alg}, "claims")
		if err != nil {
			t.Fatal(err)
		}
		i := strings.LastIndexByte(tok, '.')
		sig, _ := b64.DecodeString(tok[i+1:])
		if len(sig) != 2*c.size {
			t.Fatalf("%s: %d bytes; want %d", c.alg, len(sig), 2*c.size)
		}
		r, s := new(big.Int).SetBytes(sig[:c.size]), new(big.Int).SetBytes(sig[c.size:])
		if !ecdsa.Verify(&k.PublicKey, c.sum([]byte(tok[:i])), r, s) {
			t.Errorf("%s: the signature does not verify", c.alg)
		}
	}
}
