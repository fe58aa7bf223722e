package openapi

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
)

// deriveFormat changes whenever what derive produces changes, so that a
// cached derivation of an older build is not used.
const deriveFormat = "openapi-derive-6"

// derivedCache keeps derivations on disk under dir, keyed by the document's
// hash, the binary's version (buildVersion) and deriveFormat.
type derivedCache struct {
	dir string // "" disables it
}

func (c derivedCache) path(docHash string) string {
	return cachePath(c.dir, "derived", deriveFormat+"\x00"+buildVersion()+"\x00"+docHash, ".gob")
}

// load returns the cached derivation of a document, or nil when there is
// none; a damaged entry is an error (the caller derives again).
func (c derivedCache) load(docHash string) (*derivation, error) {
	if c.dir == "" {
		return nil, nil
	}
	b, err := os.ReadFile(c.path(docHash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d derivation
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&d); err != nil {
		return nil, fmt.Errorf("cached derivation %s: %w", c.path(docHash), err)
	}
	return &d, nil
}

// store writes a derivation.
func (c derivedCache) store(docHash string, d *derivation) error {
	if c.dir == "" {
		return nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(d); err != nil {
		return err
	}
	return writeFileAtomic(c.path(docHash), b.Bytes())
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
