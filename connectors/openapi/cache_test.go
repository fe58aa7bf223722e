package openapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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

// TestWriteRemovesStaleTemporaries: a write into a cache directory removes
// the temporary files that writes which never finished (a crash, a kill)
// left there, and nothing else: not a temporary file a concurrent writer
// may still be writing (a recent one), not a symlink shaped like one or
// what it points to, not a directory, not a file of another name.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	target := cachePath(dir, "documents", "https://api.example/openapi.json", ".doc")
	sub := filepath.Dir(target)
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleTemporary)
	file := func(name string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(sub, name)
		if err := os.WriteFile(p, []byte("half a document"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := file(".tmp-1234567890", old)
	recent := file(".tmp-42", time.Now())
	otherName := file(".tmp-notes", old)
	notTemp := file("notes.tmp-1", old)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(outside, old, old); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(sub, ".tmp-7")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	dirShaped := filepath.Join(sub, ".tmp-8")
	if err := os.Mkdir(dirShaped, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dirShaped, old, old); err != nil {
		t.Fatal(err)
	}

	if err := writeFileAtomic(target, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is left (%v)", err)
	}
	for _, kept := range []string{target, recent, otherName, notTemp, link, outside, dirShaped} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s is removed: %v", kept, err)
		}
	}
}
