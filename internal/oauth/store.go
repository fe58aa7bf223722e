package oauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Store keeps what the client must remember between processes: grants
// (tokens) and client registrations, as values by kind and id. It is the
// part of connectors.Records the client uses, so that the execution log's
// records (SQLite or PostgreSQL) are shared by every process using the
// same database (a server, the command line, replicas); MemoryStore keeps
// them in one process. It must be safe for concurrent use.
type Store interface {
	// GetRecord returns the record of kind and id;
	// connectors.ErrRecordNotFound if there is none.
	GetRecord(ctx context.Context, kind, id string) (connectors.Record, error)
	// ReplaceRecord replaces the value of kind and id by new if it is old,
	// and reports whether it did: of several processes swapping from the
	// same old value, exactly one succeeds. A nil old means "absent" (it
	// inserts); a nil new deletes.
	ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error)
}

// Load returns the value of kind and id in st; nil when there is none.
func Load(ctx context.Context, st Store, kind, id string) ([]byte, error) {
	rec, err := st.GetRecord(ctx, kind, id)
	if errors.Is(err, connectors.ErrRecordNotFound) {
		return nil, nil
	}
	return rec.Value, err
}

// Record kinds (connectors.Records) of what the client keeps.
const (
	// KindGrant holds a server's grant: its tokens, sealed. Its id is the
	// server's URL without query (grantID).
	KindGrant = "oauth.grant"
	// KindClient holds a client registration with an authorization
	// server (RFC 7591), sealed. Its id is the server's issuer.
	KindClient = "oauth.client"
)

// KeySize is the size of the key that seals stored values (AES-256).
const KeySize = 32

// EnvSecretKey names the environment variable that holds the key.
const EnvSecretKey = "CODEMODE_SECRET_KEY"

// KeyFileName is the key file's name in the state directory.
const KeyFileName = "secret.key"

// A Sealer encrypts values at rest with AES-256-GCM. The associated data
// binds a sealed value to its kind and id, so a value copied to another
// record does not open. Sealed values are JSON objects, as records hold
// JSON.
type Sealer struct {
	key func() (sealKey, error) // loaded on first use, once
}

type sealKey struct {
	aead cipher.AEAD
	kid  string // identifies the key, so a value sealed with another key is told apart
}

// sealed is the stored form of a sealed value.
type sealed struct {
	Alg   string `json:"alg"`
	KeyID string `json:"kid"`
	Nonce string `json:"nonce"`
	Data  string `json:"data"`
}

// errOtherKey is wrapped by the error of a value sealed with another key.
var errOtherKey = errors.New("sealed with another key")

// NewSealer returns a Sealer for a KeySize-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	s := LazySealer(func() ([]byte, error) { return key, nil })
	if _, err := s.key(); err != nil {
		return nil, err
	}
	return s, nil
}

// LazySealer returns a Sealer whose key load returns when first needed
// (LoadKey creates a key file: with LazySealer nothing is created until a
// value is sealed, or a stored one opened). An error of load is the error
// of every Seal and Open.
func LazySealer(load func() ([]byte, error)) *Sealer {
	return &Sealer{key: sync.OnceValues(func() (sealKey, error) {
		key, err := load()
		switch {
		case err != nil:
			return sealKey{}, fmt.Errorf("the key that seals stored tokens: %w", err)
		case len(key) != KeySize:
			return sealKey{}, fmt.Errorf("the key is %d bytes; it must be %d", len(key), KeySize)
		}
		block, _ := aes.NewCipher(key) // (no error for a KeySize key)
		aead, _ := cipher.NewGCM(block)
		sum := sha256.Sum256(append([]byte("codemode-mcp key id\x00"), key...))
		return sealKey{aead: aead, kid: hex.EncodeToString(sum[:4])}, nil
	})}
}

// Seal encrypts plain for kind and id.
func (s *Sealer) Seal(kind, id string, plain []byte) ([]byte, error) {
	k, err := s.key()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand, Go 1.24+)
	ct := k.aead.Seal(nil, nonce, plain, aad(kind, id))
	return json.Marshal(sealed{
		Alg:   "A256GCM",
		KeyID: k.kid,
		Nonce: base64.RawStdEncoding.EncodeToString(nonce),
		Data:  base64.RawStdEncoding.EncodeToString(ct),
	})
}

// Open decrypts a value Seal made for kind and id.
func (s *Sealer) Open(kind, id string, value []byte) ([]byte, error) {
	k, err := s.key()
	if err != nil {
		return nil, err
	}
	var v sealed
	if err := json.Unmarshal(value, &v); err != nil || v.Alg != "A256GCM" {
		return nil, fmt.Errorf("%s %s: not a sealed value", kind, id)
	}
	if v.KeyID != k.kid {
		return nil, fmt.Errorf("%s %s: %w (key %s, this process has key %s)", kind, id, errOtherKey, clean(v.KeyID, 16), k.kid)
	}
	nonce, err1 := base64.RawStdEncoding.DecodeString(v.Nonce)
	ct, err2 := base64.RawStdEncoding.DecodeString(v.Data)
	if err1 != nil || err2 != nil || len(nonce) != k.aead.NonceSize() {
		return nil, fmt.Errorf("%s %s: a malformed sealed value", kind, id)
	}
	plain, err := k.aead.Open(nil, nonce, ct, aad(kind, id))
	if err != nil {
		return nil, fmt.Errorf("%s %s: the sealed value does not open (altered, or moved from another record)", kind, id)
	}
	return plain, nil
}

func aad(kind, id string) []byte { return []byte("codemode-mcp\x00" + kind + "\x00" + id) }

// LoadKey returns the key that seals stored values and says where it came
// from: the environment variable CODEMODE_SECRET_KEY when set (32 bytes,
// written as 64 hexadecimal digits or in base64, standard or URL-safe,
// with or without padding), else the key file secret.key in dir, created
// (0600, in a 0700 directory) with a random key on first use. Replicas on
// several machines must share one key: set the variable on each.
func LoadKey(dir string) ([]byte, string, error) {
	if v, ok := os.LookupEnv(EnvSecretKey); ok {
		k, err := ParseKey(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvSecretKey, err)
		}
		return k, "$" + EnvSecretKey, nil
	}
	if dir == "" {
		return nil, "", fmt.Errorf("no state directory for the key file: set %s", EnvSecretKey)
	}
	path := filepath.Join(dir, KeyFileName)
	k, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k, err = createKeyFile(dir, path)
	}
	if err != nil {
		return nil, "", err
	}
	return k, path, nil
}

// ParseKey reads a KeySize-byte key written as hexadecimal digits or in
// base64 (standard or URL-safe, padded or not). Surrounding space is
// ignored.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("not a %d-byte key: write it as %d hexadecimal digits or in base64 (for example: openssl rand -base64 32)", KeySize, 2*KeySize)
}

// maxKeyFile bounds what is read of a key file: a key is 45 bytes in
// base64 with its newline, 65 in hexadecimal.
const maxKeyFile = 1 << 10

// readKeyFile reads the key in the file at path, which only its owner may
// read, and which holds one key: a larger file is refused before it is
// read whole.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s is readable by others (mode %v): make it 0600", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("key file: %w", err)
	case len(b) > maxKeyFile:
		return nil, fmt.Errorf("key file %s is over %d bytes: it holds one %d-byte key, written as %d hexadecimal digits or in base64", path, maxKeyFile, KeySize, 2*KeySize)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// createKeyFile writes a new random key to path, unless another process
// created it first (then it reads that one).
func createKeyFile(dir, path string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("key file directory: %w", err)
	}
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand, Go 1.24+)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("key file: %w", err)
	}
	return k, nil
}

// vault is a Store with a Sealer: values (JSON) go in sealed and come
// out open, with the stored form kept for the next swap.
type vault struct {
	store Store
	seal  *Sealer
}

// load opens the value of kind and id into v and returns its stored form
// (nil when there is none).
func (vt vault) load(ctx context.Context, kind, id string, v any) ([]byte, error) {
	raw, err := Load(ctx, vt.store, kind, id)
	if err != nil || raw == nil {
		return nil, err
	}
	plain, err := vt.seal.Open(kind, id, raw)
	if err == nil {
		if err = json.Unmarshal(plain, v); err != nil {
			err = fmt.Errorf("stored %s %s: %w", kind, id, err)
		}
	}
	return raw, err
}

// swap seals v (nil deletes) and swaps it in for raw; it returns the new
// stored form and whether the swap happened.
func (vt vault) swap(ctx context.Context, kind, id string, raw []byte, v any) ([]byte, bool, error) {
	var next []byte
	if v != nil {
		plain, err := json.Marshal(v)
		if err == nil {
			next, err = vt.seal.Seal(kind, id, plain)
		}
		if err != nil {
			return nil, false, err
		}
	}
	ok, err := vt.store.ReplaceRecord(ctx, kind, id, raw, next)
	if err != nil {
		return nil, false, err
	}
	return next, ok, nil
}

// put seals v (nil deletes) and stores it whatever is stored meanwhile.
func (vt vault) put(ctx context.Context, kind, id string, v any) error {
	for range 10 {
		raw, err := Load(ctx, vt.store, kind, id)
		if err != nil || raw == nil && v == nil {
			return err
		}
		if _, ok, err := vt.swap(ctx, kind, id, raw, v); err != nil || ok {
			return err
		}
	}
	return errors.New("it kept changing")
}

// MemoryStore is a Store in this process's memory, for tokens that are
// not to be kept (codemode-mcp check --url). It is safe for concurrent
// use.
type MemoryStore struct {
	mu     sync.Mutex
	values map[string][]byte // by kind and id
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{values: map[string][]byte{}} }

// GetRecord implements Store.
func (m *MemoryStore) GetRecord(_ context.Context, kind, id string) (connectors.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[kind+"\x00"+id]
	if !ok {
		return connectors.Record{}, connectors.ErrRecordNotFound
	}
	return connectors.Record{Kind: kind, ID: id, Value: v}, nil
}

// ReplaceRecord implements Store.
func (m *MemoryStore) ReplaceRecord(_ context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := kind + "\x00" + id
	cur, ok := m.values[k]
	if ok != (old != nil) || ok && !bytes.Equal(cur, old) {
		return false, nil
	}
	if new == nil {
		delete(m.values, k)
	} else {
		m.values[k] = bytes.Clone(new)
	}
	return true, nil
}
