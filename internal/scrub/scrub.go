// Package scrub removes secret values (credentials from the configuration,
// tokens obtained at run time) from text and JSON before it reaches a model,
// a log or the store.
//
// A Scrubber replaces every occurrence of each secret, and of the forms in
// which a secret commonly travels (JSON-escaped, URL-encoded), with
// Placeholder. JSON is scrubbed structurally, so the result stays valid JSON
// whatever the secret contains. Values shorter than MinLen are not secrets
// it can scrub without mangling ordinary text; they are ignored (callers
// that collect secrets from a configuration may warn about them).
package scrub

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Placeholder replaces a secret.
const Placeholder = "[redacted]"

// MinLen is the shortest value treated as a secret.
const MinLen = 4

// A Scrubber holds a set of secrets. The zero value holds none. It is safe
// for concurrent use; secrets can be added while it is in use.
type Scrubber struct {
	mu    sync.RWMutex
	forms []string // every form of every secret, longest first; guarded by mu
	r     *strings.Replacer
}

// New returns a Scrubber holding secrets.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(secrets...)
	return s
}

// Add adds secrets (and their escaped and encoded forms). Values shorter
// than MinLen, and values already held, are ignored.
func (s *Scrubber) Add(secrets ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, v := range secrets {
		if len(v) < MinLen {
			continue
		}
		for _, f := range forms(v) {
			if !slices.Contains(s.forms, f) {
				s.forms = append(s.forms, f)
				changed = true
			}
		}
	}
	if !changed {
		return
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortStableFunc(s.forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(s.forms))
	for _, f := range s.forms {
		pairs = append(pairs, f, Placeholder)
	}
	s.r = strings.NewReplacer(pairs...)
}

// forms lists the ways v appears in text: as it is, JSON-escaped (without
// the quotes), and URL-encoded (query and path escaping).
func forms(v string) []string {
	out := []string{v}
	add := func(f string) {
		if len(f) >= MinLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// SecretHeader reports whether a configured HTTP header's value is a
// secret to scrub: any header's but those that describe the exchange
// (Accept*, Content-Type, User-Agent, *-Version). Their values (a media
// type, a client name, an API version date such as GitHub's 2022-11-28)
// are not secrets, and scrubbing them would mangle answers that happen to
// hold them.
func SecretHeader(name string) bool {
	n := strings.ToLower(name)
	return !strings.HasPrefix(n, "accept") && n != "content-type" && n != "user-agent" && !strings.HasSuffix(n, "-version")
}

// Empty reports whether s holds no secret.
func (s *Scrubber) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r == nil
}

// replacer returns the current replacer, or nil.
func (s *Scrubber) replacer() *strings.Replacer {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r
}

// String returns text with every secret replaced.
func (s *Scrubber) String(text string) string {
	r := s.replacer()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Contains reports whether text holds a secret in any of its forms.
func (s *Scrubber) Contains(text string) bool {
	r := s.replacer()
	return r != nil && r.Replace(text) != text
}

// Error returns err unchanged when its message holds no secret, else an
// error whose message is scrubbed. The original is not wrapped (its message
// would leak through errors.Unwrap), except that errors.Is still finds
// sentinel errors of the chain.
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.String(msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, orig: err}
}

type scrubbed struct {
	msg  string
	orig error
}

func (e *scrubbed) Error() string { return e.msg }

// Is lets errors.Is see through to the original chain without exposing it.
func (e *scrubbed) Is(target error) bool {
	return target != nil && errors.Is(e.orig, target)
}

// JSON returns raw with every string (keys too) that holds a secret
// scrubbed. raw is returned as is when no string in it holds a secret;
// invalid JSON that holds a secret becomes a JSON string of its scrubbed
// text.
func (s *Scrubber) JSON(raw json.RawMessage) json.RawMessage {
	r := s.replacer()
	if r == nil {
		return raw
	}
	// Fast path: without a backslash, every string's text is in raw as it
	// decodes, so no form of a secret in raw means none in any string.
	if bytes.IndexByte(raw, '\\') < 0 && r.Replace(string(raw)) == string(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if r.Replace(string(raw)) == string(raw) {
			return raw
		}
		b, _ := json.Marshal(r.Replace(string(raw)))
		return b
	}
	v, changed := scrubValue(r, v)
	if !changed {
		return raw
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		b, _ = json.Marshal(r.Replace(string(raw)))
	}
	return b
}

// scrubValue scrubs the strings and keys of a decoded value in place and
// reports whether any changed.
func scrubValue(r *strings.Replacer, v any) (any, bool) {
	switch x := v.(type) {
	case string:
		c := r.Replace(x)
		return c, c != x
	case []any:
		changed := false
		for i := range x {
			var ch bool
			x[i], ch = scrubValue(r, x[i])
			changed = changed || ch
		}
		return x, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			ck := r.Replace(k)
			ce, ch := scrubValue(r, e)
			changed = changed || ch || ck != k
			out[ck] = ce
		}
		return out, changed
	}
	return v, false
}

// marshalNoEscape encodes v as compact JSON without escaping <, > and &.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
