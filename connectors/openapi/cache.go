package openapi

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
)

// deriveFormat changes whenever what derive produces changes, so that a
// cached derivation of an older build is not used.
const deriveFormat = "openapi-derive-8"

// derivedCache keeps derivations on disk under dir, keyed by the document's
// hash, the binary's version (buildVersion) and deriveFormat.
//
// A file is that key, a line break, the CRC-32C of the rest (4 bytes, big
// endian) and the derivation in gob, which trusts its input (90 bytes
// claiming four million map members allocate 384 MiB): load hands gob only
// what this code wrote for this document and build, whole, and reads
// nothing larger than the derivation can be (see docs/ARCHITECTURE.md).
type derivedCache struct {
	dir string // "" disables it
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c derivedCache) key(docHash string) string {
	return deriveFormat + "\x00" + buildVersion() + "\x00" + docHash
}

func (c derivedCache) path(docHash string) string {
	return cachePath(c.dir, "derived", c.key(docHash), ".gob")
}

// load returns the cached derivation of a document of docSize bytes, or
// nil when there is none; an entry that is not this build's derivation of
// the document, whole, is an error (the caller derives again).
func (c derivedCache) load(docHash string, docSize int64) (*derivation, error) {
	if c.dir == "" {
		return nil, nil
	}
	// What derive may write for the document (see derivedPerByte), and
	// the methods besides.
	limit := 2 * (minDerivedBytes + derivedPerByte*docSize)
	b, err := readFile(c.path(docHash), "the cached derivation", limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, ok := bytes.CutPrefix(b, []byte(c.key(docHash)+"\n"))
	if !ok || len(b) < 4 {
		return nil, fmt.Errorf("the cached derivation %s is not this build's derivation of the document", c.path(docHash))
	}
	if sum, payload := binary.BigEndian.Uint32(b), b[4:]; crc32.Checksum(payload, castagnoli) != sum {
		return nil, fmt.Errorf("the cached derivation %s is damaged (checksum mismatch)", c.path(docHash))
	}
	var d derivation
	if err := gob.NewDecoder(bytes.NewReader(b[4:])).Decode(&d); err != nil {
		return nil, fmt.Errorf("cached derivation %s: %w", c.path(docHash), err)
	}
	return &d, nil
}

// store writes a derivation.
func (c derivedCache) store(docHash string, d *derivation) error {
	if c.dir == "" {
		return nil
	}
	b := bytes.NewBufferString(c.key(docHash) + "\n\x00\x00\x00\x00")
	head := b.Len()
	if err := gob.NewEncoder(b).Encode(d); err != nil {
		return err
	}
	out := b.Bytes()
	binary.BigEndian.PutUint32(out[head-4:], crc32.Checksum(out[head:], castagnoli))
	if err := writeFileAtomic(c.path(docHash), out); err != nil {
		return err
	}
	return c.prune(docHash)
}

// prune removes the document's derivations of other formats and builds,
// which nothing reads again: every upgrade would otherwise leave one per
// document in the cache (up to gigabytes for a large one). A file is
// removed only when its name is one cachePath makes (32 hexadecimal digits
// and ".gob"), it is a regular file (a symlink is neither read nor
// followed), and its header is a key of this package ending in the
// document's hash.
func (c derivedCache) prune(docHash string) error {
	keep := c.path(docHash)
	dir := filepath.Dir(keep)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("prune the cached derivations: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if name == keep || !e.Type().IsRegular() || !isCacheName(e.Name(), ".gob") {
			continue
		}
		if c.isOtherDerivation(name, docHash) {
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// isOtherDerivation reports whether the file at name starts with a key of
// derivedCache for docHash (any format, any build).
func (c derivedCache) isOtherDerivation(name, docHash string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 1024) // a key is about 250 bytes
	n, _ := io.ReadFull(f, head)
	line, _, ok := bytes.Cut(head[:n], []byte("\n"))
	return ok && bytes.HasPrefix(line, []byte("openapi-derive-")) && bytes.HasSuffix(line, []byte("\x00"+docHash))
}

// isCacheName reports whether name is one cachePath makes with ext.
func isCacheName(name, ext string) bool {
	h, ok := strings.CutSuffix(name, ext)
	return ok && len(h) == 32 && strings.Trim(h, "0123456789abcdef") == ""
}

// buildVersion identifies this binary's build: its module version and,
// when the build recorded them, its VCS revision and whether the tree was
// modified.
var buildVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			v += " " + s.Key + "=" + s.Value
		}
	}
	return v
})
