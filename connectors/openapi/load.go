package openapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/origin"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// maxDocumentBytes bounds a document (GitHub's is 13 MB).
const maxDocumentBytes = 64 << 20

// fetchTimeout bounds fetching a document from a URL.
const fetchTimeout = 30 * time.Second

// A document is a document as read, before parsing.
type document struct {
	// hash is the SHA-256 of the document's bytes, hex; size is their
	// length.
	hash string
	size int64
	// url is where it was fetched from; nil for a file.
	url *url.URL
	// warnings say why a cached copy was used.
	warnings []string

	// raw is the document as read at start (JSON or YAML); nil for a
	// file whose identity matched the cache's record (see openFile),
	// which is read only when its bytes are needed (to derive, or for
	// spec). read reads it again, from the file or the cache's copy of a
	// fetched one, refusing bytes that are no longer the document; nil
	// when raw is its only copy. New keeps raw only then: a connector
	// lives as long as the server, and spec is rarely called.
	raw  []byte
	read func() ([]byte, error)
}

// bytes returns the document as read (JSON or YAML).
func (d *document) bytes() ([]byte, error) {
	if d.raw != nil || d.read == nil {
		return d.raw, nil
	}
	return d.read()
}

// readAgain reads the document of hash again from the file at loc; what
// names it in errors (the file, or the URL of the cached copy).
func readAgain(loc, what, hash string) func() ([]byte, error) {
	return func() ([]byte, error) {
		raw, err := readFile(loc, "the OpenAPI document", maxDocumentBytes)
		if err == nil && hashOf(raw) != hash {
			return nil, fmt.Errorf("the OpenAPI document %s changed while codemode-mcp ran; restart it", what)
		}
		return raw, err
	}
}

// readDocument reads a document from a file or fetches it from a URL
// (cached on disk when cacheDir is set: offline, the cached copy is used,
// with a warning).
func readDocument(ctx context.Context, loc, cacheDir string) (*document, error) {
	if !origin.IsHTTP(loc) {
		return openFile(loc, cacheDir)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("OpenAPI document URL: %w", err)
	}
	cache := docCache{dir: cacheDir, url: loc}
	cached, meta, cacheErr := cache.read()
	raw, etag, notModified, err := fetch(ctx, u, meta.ETag)
	if err == nil && notModified { // only asked with the cached copy's ETag
		return cache.document(cached, u, meta.SHA256), nil
	}
	if err == nil {
		d := newDocument(raw, u, "")
		if werr := cache.write(raw, docMeta{ETag: etag, Fetched: time.Now(), SHA256: d.hash}); werr != nil {
			d.warnings = append(d.warnings, fmt.Sprintf("could not cache the document: %v", werr))
			return d, nil
		}
		return cache.document(raw, u, d.hash), nil
	}
	if cacheErr != nil {
		return nil, fmt.Errorf("fetch the OpenAPI document %s: %w", scrub.URL(loc), err)
	}
	d := cache.document(cached, u, meta.SHA256)
	d.warnings = append(d.warnings, fmt.Sprintf("could not fetch the document %s (%v); using the copy cached on %s",
		scrub.URL(loc), err, meta.Fetched.UTC().Format(time.RFC3339)))
	return d, nil
}

// newDocument is the document of raw; hash is its hash when known (the
// cache checked it), "" to compute it.
func newDocument(raw []byte, u *url.URL, hash string) *document {
	if hash == "" {
		hash = hashOf(raw)
	}
	return &document{hash: hash, size: int64(len(raw)), url: u, raw: raw}
}

func hashOf(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// openFile opens a document file. When the cache recorded the file's
// identity (see fileIdentity) and it is unchanged, the document's hash is
// the one recorded and its bytes are read only if needed: a start whose
// derivation is cached does not read (or hash) a large document at all.
// Otherwise the file is read, hashed, and its identity recorded (best
// effort: a start without it reads the file).
func openFile(loc, cacheDir string) (*document, error) {
	abs, err := filepath.Abs(loc)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	read := func() (*document, error) {
		raw, err := readFile(abs, "the OpenAPI document", maxDocumentBytes)
		if err != nil {
			return nil, err
		}
		d := newDocument(raw, nil, "")
		d.read = readAgain(abs, abs, d.hash)
		return d, nil
	}
	if cacheDir == "" {
		return read()
	}
	// The record: the path and identity, a line break, the hash.
	record := cachePath(cacheDir, "files", abs, ".txt")
	before, statErr := fileIdentity(abs)
	key := fmt.Sprintf("%s %+v\n", abs, before)
	if rec, err := readFile(record, "the cached record of the document file", 1<<20); statErr == nil && err == nil {
		if hash, ok := strings.CutPrefix(string(rec), key); ok && len(hash) == 64 {
			return &document{hash: hash, size: before.Size, read: readAgain(abs, abs, hash)}, nil
		}
	}
	d, err := read()
	if err != nil {
		return nil, err
	}
	if after, err := fileIdentity(abs); statErr == nil && err == nil && after == before {
		_ = writeFileAtomic(record, []byte(key+d.hash))
	}
	return d, nil
}

// identity is what tells that a file did not change: its size, inode,
// modification and change times (the change time moves on every write and
// cannot be set back).
type identity struct {
	Size, MTime, CTime int64
	Inode              uint64
}

// readFile reads a file whole, in one read of its size, refusing more
// than limit bytes; what names it in errors ("the OpenAPI document").
func readFile(loc, what string, limit int64) ([]byte, error) {
	f, err := os.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return readCapped(f, what+" "+loc, size, limit)
}

// readCapped reads r whole, refusing more than limit bytes; size, when
// known (> 0), is how much to expect, so the buffer is made once (growing
// one would clear and copy it, which for a 13 MB document costs tens of
// milliseconds here).
func readCapped(r io.Reader, what string, size, limit int64) ([]byte, error) {
	tooLarge := fmt.Errorf("%s is larger than %d MiB", what, limit>>20)
	if size > limit {
		return nil, tooLarge
	}
	var b bytes.Buffer
	b.Grow(int(max(size, 0)) + bytes.MinRead)
	if _, err := b.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(b.Len()) > limit {
		return nil, tooLarge
	}
	return b.Bytes(), nil
}

// fetch GETs a document and its ETag; with etag, a 304 answer is reported
// as notModified.
func fetch(ctx context.Context, u *url.URL, etag string) (raw []byte, newTag string, notModified bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", false, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, query included
		}
		return nil, "", false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && etag != "" {
		return nil, etag, true, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", false, fmt.Errorf("HTTP %s", resp.Status)
	}
	raw, err = readCapped(resp.Body, "the OpenAPI document", resp.ContentLength, maxDocumentBytes)
	return raw, resp.Header.Get("ETag"), false, err
}

// docMeta is what the cache keeps beside a fetched document.
type docMeta struct {
	ETag    string    `json:"etag,omitempty"`
	Fetched time.Time `json:"fetched"`
	SHA256  string    `json:"sha256"`
}

// docCache is the cached copy of a fetched document.
type docCache struct {
	dir, url string
}

// read returns the cached copy and its metadata; an error when there is
// none (or it is damaged).
func (c docCache) read() ([]byte, docMeta, error) {
	var meta docMeta
	if c.dir == "" {
		return nil, meta, errors.New("no cache")
	}
	mb, err := readFile(cachePath(c.dir, "documents", c.url, ".json"), "the cached document's record", 1<<20)
	if err == nil {
		err = json.Unmarshal(mb, &meta)
	}
	raw, rerr := readFile(cachePath(c.dir, "documents", c.url, ".doc"), "the cached document", maxDocumentBytes)
	if err = cmp.Or(err, rerr); err == nil && hashOf(raw) != meta.SHA256 {
		err = errors.New("cached copy damaged")
	}
	if err != nil {
		return nil, docMeta{}, err
	}
	return raw, meta, nil
}

// document is the fetched document raw, of hash, which the cache holds:
// read again from there.
func (c docCache) document(raw []byte, u *url.URL, hash string) *document {
	d := newDocument(raw, u, hash)
	if c.dir == "" {
		return d
	}
	d.read = readAgain(cachePath(c.dir, "documents", c.url, ".doc"), "cached from "+scrub.URL(c.url), hash)
	return d
}

// write stores a fetched document and its metadata.
func (c docCache) write(raw []byte, meta docMeta) error {
	if c.dir == "" {
		return nil
	}
	mb, err := json.Marshal(meta)
	if err == nil {
		err = writeFileAtomic(cachePath(c.dir, "documents", c.url, ".doc"), raw)
	}
	if err == nil {
		err = writeFileAtomic(cachePath(c.dir, "documents", c.url, ".json"), mb)
	}
	return err
}

// cachePath is the cache's file of kind for key (a URL, a path): named by
// key's hash, so any key names a file.
func cachePath(dir, kind, key, ext string) string {
	return filepath.Join(dir, "openapi", kind, hashOf([]byte(key))[:32]+ext)
}

// writeFileAtomic writes a file through a temporary file and a rename, so
// a reader never sees half of it. It then removes the directory's stale
// temporary files (see removeStaleTemporaries).
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	removeStaleTemporaries(dir)
	return nil
}

// tempPrefix starts the name of writeFileAtomic's temporary files;
// os.CreateTemp ends it with decimal digits.
const tempPrefix = ".tmp-"

// staleTemporary is the age past which a temporary file is one a write
// left when it never finished (a crash, a kill), not one a concurrent
// writer (another process on the same cache) is still writing: a write
// takes under a second.
const staleTemporary = 10 * time.Minute

// removeStaleTemporaries removes, best effort, what writes that never
// finished left in dir (up to a whole document or derivation each, which
// nothing else removes): only regular files (a symlink is neither
// followed nor removed) named as os.CreateTemp names writeFileAtomic's,
// and modified more than staleTemporary ago.
func removeStaleTemporaries(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemporary {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// A specDocument is a document as spec reads it (see specKeep).
type specDocument struct {
	root value
	size int // of its JSON text
}

// parsed returns the document parsed (converted from YAML until ctx is
// done).
func (d *document) parsed(ctx context.Context) (specDocument, error) {
	text, err := d.jsonText(ctx)
	if err != nil {
		return specDocument{}, err
	}
	root, ok := parseJSON(text)
	if !ok {
		return specDocument{}, errors.New("spec: the document is not valid JSON")
	}
	return specDocument{root, len(text)}, nil
}

// jsonText returns the document as JSON: JSON as it is, YAML converted
// (until ctx is done).
func (d *document) jsonText(ctx context.Context) ([]byte, error) {
	raw, err := d.bytes()
	if err != nil {
		return nil, err
	}
	if isJSONText(raw) {
		return bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), nil
	}
	return yamlToJSON(ctx, raw)
}

// isJSONText reports whether b starts (after white space and a byte order
// mark) like a JSON object.
func isJSONText(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
