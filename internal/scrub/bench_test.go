package scrub

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSecrets are what a configuration with a few connectors holds: a
// GitHub token, an API key, a basic credential and its password, an OAuth
// client secret and a database password.
var benchSecrets = []string{
	"ghp_0123456789abcdefghijABCDEFGHIJ012345",
	"5f2b9c0e8d7a6b5c4d3e2f1a0b9c8d7e",
	base64.StdEncoding.EncodeToString([]byte("ann:basic-password-42")),
	"basic-password-42",
	"oauth-client-secret-0f9e8d7c6b5a",
	"pg-pass-Zq81",
}

// BenchmarkScrub measures what scrubbing costs where it is done: a log
// line, an API's JSON answer without a secret (most answers) and with one,
// and a binary answer as the program gets it (base64 in JSON).
func BenchmarkScrub(b *testing.B) {
	s := New(benchSecrets...)
	line := `time=2026-01-02T03:04:05Z level=INFO msg="openapi call" call="GET /repos/{owner}/{repo}/issues" status=200 duration=1.2ms`
	var items []map[string]any
	for i := range 24 {
		items = append(items, map[string]any{"id": i, "title": "Fix the flaky test in the runtime package", "state": "open", "url": "https://api.example.com/repos/o/r/issues/1", "labels": []string{"bug", "help wanted"}})
	}
	clean, _ := json.Marshal(items)
	items[12]["body"] = "the token was " + benchSecrets[0]
	dirty, _ := json.Marshal(items)
	rnd := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, 1<<20)
	for i := range blob {
		blob[i] = byte(rnd.Uint32())
	}
	binary, _ := json.Marshal(map[string]string{"mediaType": "application/octet-stream", "base64": base64.StdEncoding.EncodeToString(blob)})

	b.Run("log-line", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if s.String(line) != line {
				b.Fatal("changed")
			}
		}
	})
	for _, bc := range []struct {
		name string
		doc  []byte
	}{{"json-4k-clean", clean}, {"json-4k-secret", dirty}, {"json-1m-base64", binary}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.doc)))
			for b.Loop() {
				out := s.JSON(bc.doc)
				if strings.Contains(string(out), benchSecrets[0]) {
					b.Fatal("secret left")
				}
			}
		})
	}
}
