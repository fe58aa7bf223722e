// Package scrub removes secret values (credentials from the configuration,
// tokens obtained at run time) from text and JSON before it reaches a model,
// a log or the store.
//
// A Scrubber replaces every occurrence of each secret, and of the forms in
// which a secret commonly travels (JSON-escaped, URL-encoded, base64), with
// Placeholder. JSON is scrubbed structurally, so the result stays valid JSON
// whatever the secret contains. Values shorter than MinLen are not secrets
// it can scrub without mangling ordinary text; they are ignored (callers
// that collect secrets from a configuration may warn about them).
package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// Placeholder replaces a secret.
const Placeholder = "[redacted]"

// MinLen is the shortest value treated as a secret.
const MinLen = 4

// A Scrubber holds a set of secrets. The zero value holds none. It is safe
// for concurrent use; secrets can be added while it is in use.
//
// What Add adds is held for the Scrubber's life: configured credentials,
// a client's registered secret. A secret that is replaced over time (an
// OAuth token pair, renewed at every refresh) or good for a while only (a
// sign-in's verifier and code) goes in a Slot instead, so that memory and
// the cost of each change stay bounded by what is held now, not by
// uptime.
type Scrubber struct {
	mu    sync.RWMutex
	perm  []string // the forms Add added; guarded by mu
	slots []*Slot  // those holding values; guarded by mu
	forms []string // perm's and every slot's forms, each once, longest first; guarded by mu
	set   *formSet // made of forms; nil while there are none; guarded by mu
}

// A Slot is a place in a Scrubber for the secrets of one holder that
// replaces them as they change (see Scrubber.Slot). It holds the values
// last Set and those Set before them: a token just replaced may still be
// in an answer under way (a downstream echoing the request that carried
// it, a log line of that request written after the refresh), so it stays
// scrubbed for one more generation; the generation before that is
// forgotten. It is safe for concurrent use.
type Slot struct {
	s         *Scrubber
	cur, prev []string // the forms of the values; guarded by s.mu
	held      bool     // s.slots holds it; guarded by s.mu
}

// Slot returns a new, empty slot of s. A holder makes one, not one per
// value; s holds it from its first Set until Forget, so a holder that ends
// before s (a sign-in) leaves nothing behind once it forgets its slot.
func (s *Scrubber) Slot() *Slot { return &Slot{s: s} }

// Set makes secrets (values shorter than MinLen ignored) the slot's
// current values; the current ones become the previous, and the previous
// ones are forgotten (unless held elsewhere in the Scrubber). Setting the
// current values again changes nothing.
func (sl *Slot) Set(secrets ...string) {
	var fs []string
	for _, v := range secrets {
		if len(v) >= MinLen {
			fs = appendNew(fs, forms(v)...)
		}
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Equal(fs, sl.cur) {
		return
	}
	sl.prev, sl.cur = sl.cur, fs
	if !sl.held {
		sl.held = true
		s.slots = append(s.slots, sl)
	}
	s.rebuild()
}

// Forget drops the slot's values, current and previous, at once, and the
// slot from its Scrubber (until it is Set again): for a holder that ends,
// whose values nothing sends any more.
func (sl *Slot) Forget() {
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sl.held {
		return
	}
	sl.held, sl.cur, sl.prev = false, nil, nil
	s.slots = slices.DeleteFunc(s.slots, func(x *Slot) bool { return x == sl })
	s.rebuild()
}

// appendNew appends to list each of fs it does not hold yet.
func appendNew(list []string, fs ...string) []string {
	for _, f := range fs {
		if !slices.Contains(list, f) {
			list = append(list, f)
		}
	}
	return list
}

// rebuild remakes forms and set from perm and the slots. s.mu is held.
func (s *Scrubber) rebuild() {
	seen := make(map[string]bool, len(s.forms))
	s.forms = s.forms[:0]
	add := func(fs []string) {
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, f)
			}
		}
	}
	add(s.perm)
	for _, sl := range s.slots {
		add(sl.cur)
		add(sl.prev)
	}
	if len(s.forms) == 0 {
		s.set = nil
		return
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortStableFunc(s.forms, func(a, b string) int { return len(b) - len(a) })
	s.set = newFormSet(s.forms)
}

// A formSet finds and replaces the forms of a Scrubber's secrets. It does
// not change once made.
type formSet struct {
	r *strings.Replacer
	// seen is a filter over the first MinLen bytes of every form, so that
	// text holding none of them (almost all text) is passed over at a few
	// nanoseconds a byte: strings.Replacer alone costs several times that,
	// and scrubbing a 16 MiB binary answer (as base64) with it took
	// hundreds of milliseconds. A bit set means a form may start with
	// those bytes; byPrefix says which.
	seen     [1 << 16 / 64]uint64
	byPrefix map[uint32][]string
}

func newFormSet(forms []string) *formSet {
	fs := &formSet{byPrefix: map[uint32][]string{}}
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Placeholder)
		k := prefixKey(f, 0)
		fs.seen[bucket(k)/64] |= 1 << (bucket(k) % 64)
		fs.byPrefix[k] = append(fs.byPrefix[k], f)
	}
	fs.r = strings.NewReplacer(pairs...)
	return fs
}

// prefixKey is the MinLen (4) bytes of s at i, which must exist.
func prefixKey[T ~string | ~[]byte](s T, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// bucket is a key's bit in formSet.seen.
func bucket(k uint32) uint32 { return (k * 0x9e3779b1) >> 16 }

// hasForm reports whether text holds a form.
func hasForm[T ~string | ~[]byte](fs *formSet, text T) bool {
	for i := 0; i+MinLen <= len(text); i++ {
		k := prefixKey(text, i)
		if b := bucket(k); fs.seen[b/64]&(1<<(b%64)) == 0 {
			continue
		}
		for _, f := range fs.byPrefix[k] {
			if len(text)-i >= len(f) && string(text[i:i+len(f)]) == f {
				return true
			}
		}
	}
	return false
}

// replace returns text with every form replaced.
func (fs *formSet) replace(text string) string {
	if t, ok := fs.find(text); ok {
		return fs.r.Replace(t)
	}
	return text
}

// find reports whether text holds a form, and returns the text to replace
// the forms in: text, or text with its wrapped base64 joined (see
// unwrapBase64) when only that holds a form.
func (fs *formSet) find(text string) (string, bool) {
	if hasForm(fs, text) {
		return text, true
	}
	if t, ok := unwrapBase64(text); ok && hasForm(fs, t) {
		return t, true
	}
	return text, false
}

// unwrapBase64 returns text without the line breaks of base64 broken into
// lines as MIME (76 characters a line) and PEM or openssl (64) write it,
// which can split any form of a secret in any place: a break (LF or CRLF)
// after a line of exactly that many base64 characters and before another
// base64 character. ok is false when text has none. Scrubbed text that
// held a secret so is returned joined.
func unwrapBase64(text string) (joined string, ok bool) {
	var b []byte
	done := 0 // text[:done] is in b
	for start := 0; ; {
		n := strings.IndexByte(text[start:], '\n')
		if n < 0 || start+n+1 == len(text) {
			break
		}
		next, line := start+n+1, strings.TrimSuffix(text[start:start+n], "\r")
		if WrappedLine(line) && strings.IndexByte(Base64Chars, text[next]) >= 0 {
			b = append(b, text[done:start+len(line)]...)
			done = next
		}
		start = next
	}
	if done == 0 {
		return text, false
	}
	return string(append(b, text[done:]...)), true
}

// WrappedLine reports whether line (without its line break) is a line of
// base64 broken into lines as MIME (76 characters) or PEM and openssl (64)
// write it: one that a break joins to the next when that begins with a
// character of Base64Chars.
func WrappedLine[T ~string | ~[]byte](line T) bool {
	if len(line) != 64 && len(line) != 76 {
		return false
	}
	for i := range len(line) {
		if strings.IndexByte(Base64Chars, line[i]) < 0 {
			return false
		}
	}
	return true
}

// Base64Chars are the characters of both base64 alphabets.
const Base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"

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
	n := len(s.perm)
	for _, v := range secrets {
		if len(v) >= MinLen {
			s.perm = appendNew(s.perm, forms(v)...)
		}
	}
	if len(s.perm) != n {
		s.rebuild()
	}
}

// forms lists the ways v (at least MinLen bytes) appears in text: as it
// is, JSON-escaped once or twice (see jsonForms), URL-encoded (Go's query
// and path escaping, and JavaScript's encodeURIComponent, each with the
// hex digits in upper and in lower case, which RFC 3986 makes equivalent)
// and in base64 (see base64Forms). Escaping does not shorten v; Add drops
// the forms that repeat one.
func forms(v string) []string {
	out := []string{v}
	for _, f := range jsonForms(v) {
		out = append(append(out, f), jsonForms(f)...)
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v), uriComponent(v)} {
		out = append(out, f, lowerHex(f))
	}
	for _, f := range base64Forms(v) {
		if len(f) >= minBase64 {
			out = append(out, f)
		}
	}
	return out
}

// jsonForms lists v JSON-escaped (without the quotes) as the encoders
// downstream servers use write it: encoding/json (<, > and & as \u
// escapes), JavaScript's JSON.stringify (only quotes, backslashes and
// control characters escaped), Python's json.dumps (and every non-ASCII
// character as a \u escape, lower-case hex), PHP's json_encode (and "/"
// as "\/") and .NET's System.Text.Json with its default encoder (quotes,
// <, >, &, ', +, ` and every non-ASCII character as \u escapes,
// upper-case hex). A secret with none of these characters has one form,
// v. forms applies it twice too: a JSON document carried in a JSON string
// (an MCP tool's text content) holds v escaped by one encoder, then by
// another.
func jsonForms(v string) []string {
	html, _ := json.Marshal(v) // a string always encodes
	plain := string(jsontext.AppendStringNoHTML(nil, v))
	plain = plain[1 : len(plain)-1]
	python := escapeRunes(plain, `\u%04x`, func(r rune) bool { return r >= utf8.RuneSelf })
	dotnet := escapeRunes(v, `\u%04X`, func(r rune) bool {
		return r < 0x20 || r >= 0x7f || strings.ContainsRune(`"\<>&'+`+"`", r)
	})
	return []string{string(html[1 : len(html)-1]), plain, python, strings.ReplaceAll(python, "/", `\/`), dotnetShort.Replace(dotnet)}
}

// dotnetShort writes the escapes System.Text.Json writes short as it does.
var dotnetShort = strings.NewReplacer(`\u005C`, `\\`, `\u0008`, `\b`, `\u000C`, `\f`, `\u000A`, `\n`, `\u000D`, `\r`, `\u0009`, `\t`)

// escapeRunes returns s with every character that esc reports written as
// a \u escape in format (a surrogate pair above U+FFFF).
func escapeRunes(s, format string, esc func(rune) bool) string {
	var b strings.Builder
	for _, r := range s {
		if !esc(r) {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.AppendRune(nil, r) {
			fmt.Fprintf(&b, format, u)
		}
	}
	return b.String()
}

// lowerHex is f, percent-encoded, with the hex digits of every %XX in
// lower case.
func lowerHex(f string) string {
	b := []byte(f)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] |= 0x20 // A-F to a-f; digits have the bit already
			b[i+2] |= 0x20
		}
	}
	return string(b)
}

// uriComponent is v as JavaScript's encodeURIComponent writes it: every
// UTF-8 byte but letters, digits and -_.!~*'() as %XX.
func uriComponent(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// minBase64 is the shortest base64 form of a secret that is scrubbed: a
// shorter run of base64 characters turns up by chance in large encoded
// data (a 16 MiB binary answer holds each 6-character run about once), and
// replacing it there would corrupt the data for nothing.
const minBase64 = 8

// base64Forms lists the ways v appears in base64 text (a binary answer as
// a program gets it, a basic credential, a token an API wraps), in the
// standard and the URL alphabet: whole, with and without padding; and,
// for each of the three offsets (modulo 3 bytes) at which v can start
// within longer encoded data, the characters that only v's bytes
// determine (those it shares with its neighbours are left: at most 4 bits
// of v in each).
func base64Forms(v string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		out = append(out, enc.EncodeToString([]byte(v)), raw.EncodeToString([]byte(v)))
		for k := range 3 {
			e := raw.EncodeToString(append(make([]byte, k, k+len(v)), v...))
			// Character i holds bits 6i to 6i+5 of the data; v's are bits
			// 8k to 8(k+len(v))-1.
			from, to := (8*k+5)/6, 8*(k+len(v))/6
			out = append(out, e[from:to])
		}
	}
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
func (s *Scrubber) Empty() bool { return s.formSet() == nil }

// formSet returns the current form set, or nil.
func (s *Scrubber) formSet() *formSet {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.set
}

// String returns text with every secret replaced.
func (s *Scrubber) String(text string) string {
	fs := s.formSet()
	if fs == nil {
		return text
	}
	return fs.replace(text)
}

// Contains reports whether text holds a secret in any of its forms.
func (s *Scrubber) Contains(text string) bool {
	fs := s.formSet()
	if fs == nil {
		return false
	}
	_, ok := fs.find(text)
	return ok
}

// Cut returns how much of text, the head of a longer stream that is
// scrubbed piece by piece, can be a piece by itself: all of it but a tail
// that may be the start of a secret (or of one of its forms), which the
// caller keeps for the next piece, so that no secret is split between two
// pieces and left in both. It is 0 only when all of text may be such a
// start.
func (s *Scrubber) Cut(text []byte) int {
	if s == nil {
		return len(text)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.forms) == 0 {
		return len(text)
	}
	// Forms are longest first: a tail as long as the longest begins none.
	for i := max(0, len(text)-len(s.forms[0])+1); i < len(text); i++ {
		for _, f := range s.forms {
			if len(f) <= len(text)-i {
				break
			}
			if f[:len(text)-i] == string(text[i:]) { // compared without a copy
				return i
			}
		}
	}
	return len(text)
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
// scrubbed (and every number that holds one, a secret of digits, made a
// string), and the rest of its text as it is (members in their order,
// duplicate keys, numbers, white space). raw is returned as is when no
// value in it holds a secret; invalid JSON that holds a secret becomes a
// JSON string of its scrubbed text.
func (s *Scrubber) JSON(raw json.RawMessage) json.RawMessage {
	fs := s.formSet()
	if fs == nil {
		return raw
	}
	// Fast path: without a backslash, every string's text is in raw as it
	// decodes, so no form of a secret in raw means none in any string. A
	// string of valid JSON holds no line break, so base64 wrapped into
	// lines (see unwrapBase64) is not JSON: raw is checked for it then.
	clean := bytes.IndexByte(raw, '\\') < 0 && !hasForm(fs, raw)
	if clean && bytes.IndexByte(raw, '\n') < 0 {
		return raw
	}
	if !json.Valid(raw) {
		text := string(raw)
		if c := fs.replace(text); c != text {
			b, _ := json.Marshal(c)
			return b
		}
		return raw
	}
	if clean {
		return raw
	}
	// Outside strings valid JSON has no quote, so each quote opens a
	// string, which ends at the next quote that is not escaped. Numbers
	// are the only other text that can hold a secret.
	var out []byte
	done := 0 // raw[:done] is in out
	for i := 0; i < len(raw); i++ {
		var text string // not given to Unmarshal: it would escape, an allocation a byte
		end := i + 1
		switch c := raw[i]; {
		case c == '"':
			for raw[end] != '"' {
				if raw[end] == '\\' {
					end++
				}
				end++
			}
			end++
			var str string
			_ = json.Unmarshal(raw[i:end], &str) // valid: raw is
			text = str
		case c == '-' || '0' <= c && c <= '9':
			for end < len(raw) && strings.IndexByte("0123456789.eE+-", raw[end]) >= 0 {
				end++
			}
			if !hasForm(fs, raw[i:end]) {
				i = end - 1
				continue
			}
			text = string(raw[i:end])
		default:
			continue
		}
		if c := fs.replace(text); c != text {
			out = jsontext.AppendStringNoHTML(append(out, raw[done:i]...), c)
			done = end
		}
		i = end - 1 // the string's closing quote, the number's last digit
	}
	if out == nil {
		return raw
	}
	return append(out, raw[done:]...)
}
