package oauth

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

func TestSealer(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal(KindGrant, "https://a.example/mcp", []byte(`{"access_token":"tok-secret-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("tok-secret-1")) {
		t.Fatalf("the sealed value holds the plain text: %s", sealed)
	}
	plain, err := s.Open(KindGrant, "https://a.example/mcp", sealed)
	if err != nil || string(plain) != `{"access_token":"tok-secret-1"}` {
		t.Fatalf("Open: %s, %v", plain, err)
	}
	if _, err := s.Open(KindGrant, "https://b.example/mcp", sealed); err == nil {
		t.Error("a value moved to another record opened")
	}
	other, _ := NewSealer(bytes.Repeat([]byte{2}, KeySize))
	if _, err := other.Open(KindGrant, "https://a.example/mcp", sealed); !errors.Is(err, errOtherKey) {
		t.Errorf("Open with another key: %v, want errOtherKey", err)
	}
	if _, err := NewSealer(key[:16]); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xfb}, KeySize)
	for _, s := range []string{
		hex.EncodeToString(key),
		base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key),
		" " + base64.RawURLEncoding.EncodeToString(key) + "\n",
	} {
		if k, err := ParseKey(s); err != nil || !bytes.Equal(k, key) {
			t.Errorf("ParseKey(%q) = %x, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "short", hex.EncodeToString(key[:16]), base64.StdEncoding.EncodeToString(key[:31])} {
		if _, err := ParseKey(s); err == nil || !strings.Contains(err.Error(), "hexadecimal") {
			t.Errorf("ParseKey(%q): %v, want an error naming the encodings", s, err)
		}
	}
}

func TestLoadKey(t *testing.T) {
	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvSecretKey, hex.EncodeToString(bytes.Repeat([]byte{3}, KeySize)))
		k, from, err := LoadKey(t.TempDir())
		if err != nil || from != "$"+EnvSecretKey || k[0] != 3 {
			t.Fatalf("LoadKey: %x, %s, %v", k, from, err)
		}
		t.Setenv(EnvSecretKey, "not a key")
		if _, _, err := LoadKey(t.TempDir()); err == nil || !strings.Contains(err.Error(), EnvSecretKey) {
			t.Errorf("a bad key: %v", err)
		}
	})
	t.Run("file", func(t *testing.T) {
		os.Unsetenv(EnvSecretKey) // t.Setenv above restored it; be sure
		dir := filepath.Join(t.TempDir(), "state")
		k1, from, err := LoadKey(dir)
		if err != nil || from != filepath.Join(dir, KeyFileName) {
			t.Fatalf("first LoadKey: %v, %s", err, from)
		}
		fi, err := os.Stat(from)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("key file mode %v, %v", fi.Mode(), err)
		}
		if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
			t.Errorf("directory mode %v", di.Mode())
		}
		k2, _, err := LoadKey(dir)
		if err != nil || !bytes.Equal(k1, k2) {
			t.Fatalf("second LoadKey: %v, same key %v", err, bytes.Equal(k1, k2))
		}
		if err := os.Chmod(from, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "0600") {
			t.Errorf("a key file others can read: %v", err)
		}
	})
	t.Run("huge file", func(t *testing.T) {
		os.Unsetenv(EnvSecretKey)
		dir := t.TempDir()
		path := filepath.Join(dir, KeyFileName)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		// A gibibyte, sparse: read whole, it would be held in memory.
		if err := errors.Join(f.Truncate(1<<30), f.Close()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "over 1024 bytes") {
			t.Errorf("a huge key file: %v; want an error naming the file and its bound", err)
		}
	})
}

// A LazySealer reads its key when a value is first sealed or opened, and
// its error is theirs.
func TestLazySealer(t *testing.T) {
	loads := 0
	s := LazySealer(func() ([]byte, error) { loads++; return bytes.Repeat([]byte{4}, KeySize), nil })
	if loads != 0 {
		t.Fatal("the key was read before use")
	}
	v, err := s.Seal(KindClient, "x", []byte("{}"))
	if err != nil || loads != 1 {
		t.Fatalf("Seal: %v, %d loads", err, loads)
	}
	if _, err := s.Open(KindClient, "x", v); err != nil || loads != 1 {
		t.Fatalf("Open: %v, %d loads", err, loads)
	}
	broken := LazySealer(func() ([]byte, error) { return nil, errors.New("no key here") })
	if _, err := broken.Seal(KindClient, "x", nil); err == nil || !strings.Contains(err.Error(), "no key here") {
		t.Errorf("Seal without a key: %v", err)
	}
}

// MemoryStore swaps as the records of a database do.
func TestMemoryStore(t *testing.T) {
	ctx := t.Context()
	m := NewMemoryStore()
	swap := func(old, new string, want bool) {
		t.Helper()
		var o, n []byte
		if old != "" {
			o = []byte(old)
		}
		if new != "" {
			n = []byte(new)
		}
		if ok, err := m.ReplaceRecord(ctx, KindGrant, "a", o, n); ok != want || err != nil {
			t.Fatalf("Swap(%q → %q) = %v, %v; want %v", old, new, ok, err, want)
		}
	}
	swap("", "1", true)
	swap("", "2", false)
	swap("2", "3", false)
	swap("1", "2", true)
	if v, err := Load(ctx, m, KindGrant, "a"); err != nil || string(v) != "2" {
		t.Fatalf("Load: %q, %v", v, err)
	}
	swap("1", "", false)
	swap("2", "", true)
	if _, err := m.GetRecord(ctx, KindGrant, "a"); !errors.Is(err, connectors.ErrRecordNotFound) {
		t.Fatalf("deleted value still there (%v)", err)
	}
}
