package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	s := New("s3cr3t-token", "abc", "p@ss/w rd")
	tests := []struct{ in, want string }{
		{"Bearer s3cr3t-token here", "Bearer [redacted] here"},
		{"short abc stays", "short abc stays"}, // shorter than MinLen
		{"url ?k=p%40ss%2Fw+rd&x=1", "url ?k=[redacted]&x=1"},
		{"path /p@ss%2Fw%20rd/", "path /[redacted]/"},
		{"nothing", "nothing"},
	}
	for _, tt := range tests {
		if got := s.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if !s.Contains("x s3cr3t-token") || s.Contains("x abc") {
		t.Error("Contains disagrees with String")
	}
}

func TestLongestFirst(t *testing.T) {
	s := New("token", "token-extended")
	if got := s.String("a token-extended b token"); got != "a [redacted] b [redacted]" {
		t.Errorf("got %q", got)
	}
}

func TestJSONStaysValid(t *testing.T) {
	secret := `n"quote\back`
	s := New(secret)
	in, _ := json.Marshal(map[string]any{"k": "x" + secret + "y", secret: []any{1, "n" + secret}, "n": 1.50})
	out := s.JSON(in)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	if strings.Contains(string(out), "quote") {
		t.Fatalf("secret left in %s", out)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v["k"] != "x[redacted]y" || v["n"].(float64) != 1.5 {
		t.Errorf("scrubbed value %v", v)
	}
	if _, ok := v["[redacted]"]; !ok {
		t.Errorf("key not scrubbed: %v", v)
	}
	// Untouched JSON is returned as it is (same bytes, same order).
	clean := json.RawMessage(`{"b":1,"a":"<x>"}`)
	if got := s.JSON(clean); string(got) != string(clean) {
		t.Errorf("clean JSON changed: %s", got)
	}
	// JSON holding a secret keeps the rest of its text: member order,
	// duplicate keys, numbers as written, "<" unescaped.
	dirty := json.RawMessage(`{"z":[1.50,true,null],"a":"<` + "n\\\"quote\\\\back" + `>","z":{}}`)
	if got, want := string(s.JSON(dirty)), `{"z":[1.50,true,null],"a":"<[redacted]>","z":{}}`; got != want {
		t.Errorf("JSON(%s) = %s, want %s", dirty, got, want)
	}
	// Invalid JSON holding a secret becomes a string.
	bad := s.JSON(json.RawMessage("oops " + secret))
	var str string
	if err := json.Unmarshal(bad, &str); err != nil || str != "oops [redacted]" {
		t.Errorf("invalid JSON: %s (%v)", bad, err)
	}
}

func TestError(t *testing.T) {
	s := New("hunter2-secret")
	base := fmt.Errorf("get https://x/?key=hunter2-secret: %w", io.ErrUnexpectedEOF)
	err := s.Error(base)
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("message %q", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.Is lost the chain's sentinel")
	}
	if errors.Unwrap(err) != nil {
		t.Error("the original error is reachable with Unwrap")
	}
	plain := errors.New("fine")
	if s.Error(plain) != plain {
		t.Error("an error without a secret was replaced")
	}
	if s.Error(nil) != nil {
		t.Error("nil error")
	}
}

func TestNilAndEmpty(t *testing.T) {
	var s *Scrubber
	if s.String("x") != "x" || !s.Empty() || string(s.JSON(json.RawMessage(`1`))) != "1" {
		t.Error("nil scrubber changes text")
	}
	s.Add("whatever") // no panic
	z := &Scrubber{}
	if !z.Empty() {
		t.Error("zero value not empty")
	}
	z.Add("abcd")
	if z.Empty() || z.String("abcd") != Placeholder {
		t.Error("added secret not scrubbed")
	}
}

func TestConcurrentAdd(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); s.Add(fmt.Sprintf("secret-%d", i)) }()
		go func() { defer wg.Done(); _ = s.String("secret-1 secret-2") }()
	}
	wg.Wait()
	if got := s.String("secret-1 secret-7"); got != "[redacted] [redacted]" {
		t.Errorf("got %q", got)
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	s := New("hunter22")
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), s)).With("conn", "url?k=hunter22")
	log.Info("token hunter22 seen",
		"err", fmt.Errorf("dial: %w", errors.New("bad hunter22")),
		"n", 3,
		slog.Group("g", "v", "hunter22"),
		"any", []string{"hunter22"},
		"bytes", []byte("k=hunter22"),
		"raw", json.RawMessage(`{"k":"hunter22"}`),
	)
	out := buf.String()
	if strings.Contains(out, "hunter22") {
		t.Errorf("log holds the secret: %s", out)
	}
	for _, want := range []string{`msg="token [redacted] seen"`, `conn="url?k=[redacted]"`, `err="dial: bad [redacted]"`, "n=3", "g.v=[redacted]", "any=[[redacted]]", `bytes="k=[redacted]"`, `raw="{\"k\":\"[redacted]\"}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %s", out, want)
		}
	}
	s.Add("later-secret")
	buf.Reset()
	log.Info("now later-secret too")
	if strings.Contains(buf.String(), "later-secret") {
		t.Errorf("a secret added later is logged: %s", buf.String())
	}
}

// TestHandlerNumbers: a secret of digits (a PIN, a numeric key) logged as
// a number is scrubbed as it is in text; other numbers stay numbers.
func TestHandlerNumbers(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), New("73914582", "1.0625")))
	log.Info("m", "int", 73914582, "uint", uint64(73914582), "float", 1.0625, "n", 3, "f", 2.5)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "time")
	want := map[string]any{"level": "INFO", "msg": "m", "int": Placeholder, "uint": Placeholder, "float": Placeholder, "n": 3.0, "f": 2.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logged %v, want %v", got, want)
	}
}

// TestHandlerAny: a value a handler writes otherwise than %+v prints it
// (the JSON handler marshals the fields behind pointers and those of a
// Stringer; both handlers write a TextMarshaler's text) is scrubbed as the
// handler would write it, by either handler; so is an error whose Error()
// holds no secret but that a handler writes otherwise (the JSON handler
// as it marshals to JSON, the text handler as its text or as %+v formats
// it).
func TestHandlerAny(t *testing.T) {
	type cred struct{ Token string }
	for name, newBase := range map[string]func(io.Writer) slog.Handler{
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(NewHandler(newBase(&buf), New("hunter22")))
			log.Info("m",
				"ptr", struct {
					Name string
					Cred *cred
				}{"gh", &cred{"hunter22"}},
				"list", []*cred{{"hunter22"}},
				"stringer", hiddenCred{"hunter22"},
				"text", textCred{"hunter22"},
				"jsonErr", jsonErr{"hunter22"},
				"textErr", textErr{"hunter22"},
				"fmtErr", fmtErr{"hunter22"},
			)
			if out := buf.String(); strings.Contains(out, "hunter22") {
				t.Errorf("log holds the secret: %s", out)
			}
			if name != "json" {
				return
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"ptr": `{"Cred":{"Token":"[redacted]"},"Name":"gh"}`, "list": `[{"Token":"[redacted]"}]`, "stringer": `{"Token":"[redacted]"}`, "text": `"[redacted]"`, "jsonErr": `{"token":"[redacted]"}`} {
				if b, _ := json.Marshal(got[key]); string(b) != want {
					t.Errorf("%s logged as %s, want %s", key, b, want)
				}
			}
		})
	}
}

// hiddenCred prints without its token, but marshals it.
type hiddenCred struct{ Token string }

func (hiddenCred) String() string { return "cred" }

// textCred prints without its token, but its text holds it.
type textCred struct{ token string }

func (textCred) String() string                 { return "cred" }
func (c textCred) MarshalText() ([]byte, error) { return []byte(c.token), nil }

// jsonErr, textErr and fmtErr say nothing of their token in Error(), but
// marshal it to JSON, to text, and format it with %+v.
type (
	jsonErr struct{ token string }
	textErr struct{ token string }
	fmtErr  struct{ token string }
)

func (jsonErr) Error() string                  { return "refused" }
func (e jsonErr) MarshalJSON() ([]byte, error) { return []byte(`{"token":"` + e.token + `"}`), nil }
func (textErr) Error() string                  { return "refused" }
func (e textErr) MarshalText() ([]byte, error) { return []byte(e.token), nil }
func (fmtErr) Error() string                   { return "refused" }
func (e fmtErr) Format(f fmt.State, _ rune)    { fmt.Fprintf(f, "refused with %s", e.token) }

// TestHandlerBoundAttrs: attributes bound to a logger (With, inside and
// outside groups) are scrubbed of a secret added after they were bound, and
// keep their place.
func TestHandlerBoundAttrs(t *testing.T) {
	var buf bytes.Buffer
	s := New()
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), s)).With("url", "https://x.example/?k=late-token-1").WithGroup("g").With("a", "late-token-1", "n", 7)
	log.Info("m", "b", "late-token-1")
	if want := `msg=m url="https://x.example/?k=late-token-1" g.a=late-token-1 g.n=7 g.b=late-token-1`; !strings.Contains(buf.String(), want) {
		t.Fatalf("no secret yet: %s, want %s", buf.String(), want)
	}
	for range 2 { // the scrubber's change is seen once, then kept
		s.Add("late-token-1")
		buf.Reset()
		log.Info("m", "b", "late-token-1")
		if want := `msg=m url="https://x.example/?k=[redacted]" g.a=[redacted] g.n=7 g.b=[redacted]`; !strings.Contains(buf.String(), want) {
			t.Errorf("logged %s, want %s", buf.String(), want)
		}
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pw@mcp.example.com/mcp?api_key=k#frag", "https://mcp.example.com/mcp"},
		{"http://127.0.0.1:3001/sse", "http://127.0.0.1:3001/sse"},
		{"./spec.json", "./spec.json"},
		// Not a URL url.Parse accepts (a raw "%" in the password): its
		// credentials and query are cut all the same.
		{"https://user:p%zz@mcp.example.com/mcp?api_key=k", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com/a%zz?api_key=k#f", "https://mcp.example.com/a%zz"},
		{"https://user:pw@host:99999999999/x", "https://host:99999999999/x"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSecretHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "X-Api-Key": true, "Cookie": true, "X-Custom": true,
		"Accept": false, "accept-language": false, "Content-Type": false, "User-Agent": false,
		"X-GitHub-Api-Version": false, "anthropic-version": false,
	} {
		if got := SecretHeader(name); got != want {
			t.Errorf("SecretHeader(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPaths(t *testing.T) {
	tests := []struct{ in, want string }{
		{"open /home/me/.config/codemode/codemode.db: permission denied", "open …/codemode.db: permission denied"},
		{`exec: "/usr/local/bin/codemode-mcp": no such file`, `exec: "…/codemode-mcp": no such file`},
		{"read /tmp/x/: is a directory", "read …/x: is a directory"},
		{"panic at\n\t/root/go/pkg/mod/x@v1/y.go:12 +0x1", "panic at\n\t…/y.go:12 +0x1"},
		{"GET https://api.example.com/v1/items: 500", "GET https://api.example.com/v1/items: 500"},
		{"and/or 1/2 /", "and/or 1/2 /"},
		{"no paths here", "no paths here"},
	}
	for _, tt := range tests {
		if got := Paths(tt.in); got != tt.want {
			t.Errorf("Paths(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestBase64 checks that a secret inside base64 text is scrubbed, in the
// standard and the URL alphabet, with and without padding, whole and at
// each of the three offsets it can start at within longer encoded data:
// no part of what is left decodes to it.
func TestBase64(t *testing.T) {
	const secret = "tok_+/?~>>?secret-value-1"
	s := New(secret)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		for before := range 6 {
			for _, after := range []int{0, 1, 2, 7} {
				data := append(append(bytes.Repeat([]byte{0xfb}, before), secret...), bytes.Repeat([]byte{0xff}, after)...)
				text := "bin " + enc.EncodeToString(data) + " end"
				got := s.String(text)
				if !strings.Contains(got, Placeholder) {
					t.Errorf("%d bytes before, %d after: nothing scrubbed in %q", before, after, text)
				}
				for _, piece := range strings.Split(got, Placeholder) {
					if decodesTo(piece, secret) {
						t.Errorf("%d bytes before, %d after: %q still decodes to the secret", before, after, got)
					}
				}
			}
		}
	}
	// Whole, the padded form goes with its padding.
	if got := s.String(base64.StdEncoding.EncodeToString([]byte(secret))); got != Placeholder {
		t.Errorf("whole: %q", got)
	}
}

// decodesTo reports whether any run of text, decoded as base64 of either
// alphabet from any character, holds secret.
func decodesTo(text, secret string) bool {
	notBase64 := func(r rune) bool {
		return !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_", r)
	}
	for i := range text {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			run := text[i:]
			if j := strings.IndexFunc(run, notBase64); j >= 0 {
				run = run[:j]
			}
			run = run[:len(run)/4*4]
			if b, err := enc.DecodeString(run); err == nil && strings.Contains(string(b), secret) {
				return true
			}
		}
	}
	return false
}

// TestEscapedForms checks that a secret is found as the encoders that
// downstream servers commonly use write it inside JSON text and URLs, in
// plain text and inside a JSON string that holds a JSON document (an MCP
// tool's text content): JavaScript's JSON.stringify (no HTML escaping),
// Python's json.dumps (non-ASCII as \u escapes), PHP's json_encode ("/"
// as "\/" too), .NET's System.Text.Json (quotes, +, ' and ` as \u
// escapes, upper-case hex) and JavaScript's encodeURIComponent.
func TestEscapedForms(t *testing.T) {
	tests := []struct{ name, secret, written string }{
		{"JSON.stringify", `pa&ss"w\rd`, `pa&ss\"w\\rd`},
		{"json.dumps", `pässwörd-😀"`, `p\u00e4ssw\u00f6rd-\ud83d\ude00\"`},
		{"json_encode", `AKIA/k+ey/é`, `AKIA\/k+ey\/\u00e9`},
		{"encodeURIComponent", `s!e*c'r(e)t/ k`, `s!e*c'r(e)t%2F%20k`},
		{"System.Text.Json", "AKIA/k+ey\"'`é\n😀", `AKIA/k\u002Bey\u0022\u0027\u0060\u00E9\n\uD83D\uDE00`},
	}
	for _, tt := range tests {
		s := New(tt.secret)
		text := `{"token": "` + tt.written + `", "n": 1}`
		if got, want := s.String(text), `{"token": "[redacted]", "n": 1}`; got != want {
			t.Errorf("%s: String(%s) = %s, want %s", tt.name, text, got, want)
		}
		content, _ := json.Marshal(map[string]string{"type": "text", "text": text})
		var v struct{ Text string }
		if err := json.Unmarshal(s.JSON(content), &v); err != nil || strings.Contains(v.Text, tt.written) {
			t.Errorf("%s: JSON(%s) left the secret: %q (%v)", tt.name, content, v.Text, err)
		}
	}
}

func TestCut(t *testing.T) {
	s := New("hunter2-secret")
	tests := []struct {
		text string
		want int
	}{
		{"abc hunter2-sec", 4},       // the secret's head: kept back
		{"abc hunter2-secret", 18},   // a whole secret: scrubbed in this piece
		{"abc hunter3", 11},          // no secret starts here
		{"abc hunter2-secret h", 19}, // a second one may start
		{"hunter2", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := s.Cut([]byte(tt.text)); got != tt.want {
			t.Errorf("Cut(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	var none *Scrubber
	if got := none.Cut([]byte("hunter2")); got != 7 {
		t.Errorf("nil Scrubber: Cut = %d, want 7", got)
	}
}

// TestSlotKeepsTwoGenerations: a slot renewed many times holds the forms
// of its current and previous values only, beside what Add added for
// good; both are scrubbed, the generation before is not.
func TestSlotKeepsTwoGenerations(t *testing.T) {
	s := New("configured-secret")
	sl := s.Slot()
	tok := func(i int) string { return fmt.Sprintf("access-token-%04d", i) }
	for i := 0; i <= 500; i++ {
		sl.Set(tok(i), "refresh-token-0") // the refresh token kept, as a refresh may
	}
	var want []string
	for _, v := range []string{"configured-secret", tok(500), tok(499), "refresh-token-0"} {
		want = appendNew(want, forms(v)...)
	}
	if held := len(s.forms); held != len(want) {
		t.Fatalf("after 500 renewals the scrubber holds %d forms, want %d", held, len(want))
	}
	text := tok(500) + " " + tok(499) + " refresh-token-0 configured-secret"
	if got, want := s.String(text), strings.Repeat(Placeholder+" ", 3)+Placeholder; got != want {
		t.Errorf("String(%q) = %q, want %q", text, got, want)
	}
	if s.Contains(tok(498)) {
		t.Errorf("%q, two generations old, is still scrubbed", tok(498))
	}
	sl.Set(tok(500), "refresh-token-0") // the current values again: nothing shifts
	if !s.Contains(tok(499)) {
		t.Errorf("setting the current value again forgot the previous one")
	}
	sl.Set() // emptied: the last values are the previous generation
	if !s.Contains(tok(500)) {
		t.Errorf("an emptied slot forgot its last values at once")
	}
	sl.Set("another-token")
	if !s.Contains("configured-secret") || s.Contains(tok(500)) {
		t.Errorf("an emptied slot: configured secret held %v, old token held %v", s.Contains("configured-secret"), s.Contains(tok(500)))
	}
}

// TestSlotForget: a forgotten slot's values are no longer scrubbed, and
// the Scrubber no longer holds the slot: slots made and forgotten one
// after another (a sign-in each) leave nothing behind. A slot Set again
// is held again.
func TestSlotForget(t *testing.T) {
	s := New("configured-secret")
	for i := range 100 {
		sl := s.Slot()
		v := fmt.Sprintf("sign-in-code-%03d", i)
		sl.Set(v)
		if !s.Contains(v) {
			t.Fatalf("%q is not scrubbed while its slot holds it", v)
		}
		sl.Forget()
		if s.Contains(v) {
			t.Fatalf("%q is scrubbed after its slot was forgotten", v)
		}
		sl.Forget() // twice: nothing more
	}
	if len(s.slots) != 0 || len(s.forms) != len(appendNew(nil, forms("configured-secret")...)) {
		t.Errorf("after 100 slots forgotten the scrubber holds %d slots and %d forms", len(s.slots), len(s.forms))
	}
	sl := s.Slot()
	sl.Set("again-a-token")
	sl.Forget()
	sl.Set("again-a-token")
	if !s.Contains("again-a-token") || len(s.slots) != 1 {
		t.Errorf("a slot Set after Forget: scrubbed %v, %d slots held", s.Contains("again-a-token"), len(s.slots))
	}
}

// TestLowerCasePercent: RFC 3986 makes %2f and %2F the same octet, and
// some clients and servers write the hex digits in lower case; a secret
// so encoded is scrubbed as the upper-case form is.
func TestLowerCasePercent(t *testing.T) {
	s := New("p@ss/w rd;é")
	for _, text := range []string{
		"?k=p%40ss%2fw+rd%3b%c3%a9&x=1", // url.QueryEscape, lower case
		"/p@ss%2fw%20rd%3b%c3%a9/x",     // url.PathEscape
		"?k=p%40ss%2fw%20rd%3b%c3%a9",   // encodeURIComponent
	} {
		if got := s.String(text); strings.Contains(got, "%2f") {
			t.Errorf("String(%q) = %q: the secret is left", text, got)
		}
	}
}

// TestDoublyEscaped: a JSON document carried as a JSON string inside
// another (an MCP tool's text content, as raw text: a log line, an answer
// cut short so it is no longer valid JSON) holds a secret escaped twice.
func TestDoublyEscaped(t *testing.T) {
	const secret = `a"b\c/é<d`
	s := New(secret)
	inner, _ := json.Marshal(map[string]string{"password": secret})
	outer, _ := json.Marshal(map[string]string{"type": "text", "text": string(inner)})
	for _, text := range []string{
		string(outer),                // Go, both times
		string(outer[:len(outer)-5]), // cut short: scrubbed as text
		`{"text":"{\"password\":\"a\\\"b\\\\c/é<d\"}"}`,          // JSON.stringify, both times
		`{"text":"{\"password\":\"a\\\"b\\\\c\\\/\\u00e9<d\"}"}`, // json_encode, both times
	} {
		if got := s.String(text); !strings.Contains(got, Placeholder) {
			t.Errorf("String(%s) left the secret: %s", text, got)
		}
	}
	if got := s.JSON(outer[:len(outer)-5]); !strings.Contains(string(got), Placeholder) {
		t.Errorf("JSON of a cut document left the secret: %s", got)
	}
}

// TestJSONNumber: a secret made of digits (a PIN, a numeric key) that a
// downstream writes as a JSON number, not a string, is scrubbed too; the
// number becomes a string so that the JSON stays valid.
func TestJSONNumber(t *testing.T) {
	s := New("48151623")
	for _, tt := range []struct{ in, want string }{
		{`{"pin":48151623,"n":1}`, `{"pin":"[redacted]","n":1}`},
		{`[1.5e48151623, "x\n"]`, `["1.5e[redacted]", "x\n"]`},
		{`48151623`, `"[redacted]"`},
		{`{"n":4815162}`, `{"n":4815162}`},
	} {
		if got := string(s.JSON(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("JSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestWrappedBase64: base64 broken into lines, as MIME (76 characters a
// line, CRLF) and PEM or openssl (64, LF) write it, holds a secret whose
// forms a line break may split; it is found across the break.
func TestWrappedBase64(t *testing.T) {
	const secret = "wrapped-secret-value-0123456789"
	s := New(secret)
	for _, w := range []struct {
		width int
		eol   string
	}{{76, "\r\n"}, {64, "\n"}} {
		for before := 40; before < 64; before++ { // the break falls in each place of the secret
			enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", before) + secret + " and more text after it"))
			var lines []string
			for len(enc) > w.width {
				lines, enc = append(lines, enc[:w.width]), enc[w.width:]
			}
			text := "Content-Transfer-Encoding: base64\r\n\r\n" + strings.Join(append(lines, enc), w.eol) + w.eol
			got := s.String(text)
			if !s.Contains(text) || !strings.Contains(got, Placeholder) {
				t.Errorf("width %d, %d bytes before: nothing scrubbed in %q", w.width, before, text)
			}
			// Not JSON (a downstream's answer may be any text): as String.
			if j, want := s.JSON(json.RawMessage(text)), marshal(got); string(j) != string(want) {
				t.Errorf("width %d, %d bytes before: JSON(%q) = %s, want %s", w.width, before, text, j, want)
			}
			for _, piece := range strings.Split(strings.NewReplacer("\r", "", "\n", "").Replace(got), Placeholder) {
				if decodesTo(piece, secret) {
					t.Errorf("width %d, %d bytes before: %q still decodes to the secret", w.width, before, got)
				}
			}
		}
	}
	// Lines of other widths are not base64 a tool wraps: left as they are.
	if text := "abcd\nwrapped-secret-value-0123\n456789"; s.String(text) != text {
		t.Errorf("String(%q) = %q", text, s.String(text))
	}
}

// TestBase64Carriers: the secret as HTTP Basic credentials and a JWT's
// payload carry it, inside the base64 of a longer text.
func TestBase64Carriers(t *testing.T) {
	const secret = "hunter2-password"
	s := New(secret)
	for _, user := range []string{"ann", "anne", "annie"} { // each offset modulo 3
		basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))
		jwt := "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"`+user+`","pwd":"`+secret+`"}`)) + ".c2ln"
		for _, text := range []string{basic, jwt} {
			for _, piece := range strings.Split(s.String(text), Placeholder) {
				if decodesTo(piece, secret) {
					t.Errorf("%q still decodes to the secret after scrubbing: %q", text, s.String(text))
				}
			}
		}
	}
}

// marshal is v as JSON: a string always encodes.
func marshal(v string) []byte {
	b, _ := json.Marshal(v)
	return b
}
