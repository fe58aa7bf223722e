package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStorePrunesOtherBuilds: writing a document's derivation removes that
// document's derivations of other formats and builds, and nothing else: not
// another document's, not a file of another name, not a symlink or what it
// points to.
func TestStorePrunesOtherBuilds(t *testing.T) {
	dir := t.TempDir()
	c := derivedCache{dir: dir}
	doc, other := hashOf([]byte("doc")), hashOf([]byte("other"))
	write := func(path, header string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(header+"\n\x00\x00\x00\x00gob"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	oldKey := func(format, build, hash string) string { return format + "\x00" + build + "\x00" + hash }
	oldFormat := write(cachePath(dir, "derived", oldKey("openapi-derive-6", buildVersion(), doc), ".gob"), oldKey("openapi-derive-6", buildVersion(), doc))
	oldBuild := write(cachePath(dir, "derived", oldKey(deriveFormat, "v0.9.0", doc), ".gob"), oldKey(deriveFormat, "v0.9.0", doc))
	otherDoc := write(cachePath(dir, "derived", oldKey("openapi-derive-6", "v0.9.0", other), ".gob"), oldKey("openapi-derive-6", "v0.9.0", other))
	otherName := write(filepath.Join(dir, "openapi", "derived", "notes.gob"), oldKey("openapi-derive-6", "v0.9.0", doc))
	outside := write(filepath.Join(t.TempDir(), "outside.gob"), oldKey("openapi-derive-6", "v0.9.0", doc))
	link := cachePath(dir, "derived", "a link", ".gob")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	if err := c.store(doc, &derivation{}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{oldFormat, oldBuild} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s: the document's derivation of another format or build is left (%v)", filepath.Base(gone), err)
		}
	}
	for _, kept := range []string{c.path(doc), otherDoc, otherName, outside, link} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s is removed: %v", kept, err)
		}
	}
	if d, err := c.load(doc, 100); err != nil || d == nil {
		t.Fatalf("the stored derivation does not load: %v, %v", d, err)
	}
}
