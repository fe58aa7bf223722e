package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// A remote server's answer larger than maxMessage fails the call with why,
// instead of being gathered whole, and the call alone: a JSON answer over
// the bound failed the read of the POST's answer, which mcp-go took for a
// failure of the session.
func TestRemoteOverlongAnswerFailsTheCall(t *testing.T) {
	text := strings.Repeat("x", maxMessage)
	calls := map[string]string{"big": `{"content":[{"type":"text","text":"` + text + `"}]}`}
	for _, events := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "events"}[events], func(t *testing.T) {
			f, url := startFake(t, map[string]string{"": `{"tools":[{"name":"big","inputSchema":{"type":"object"}}]}`}, calls)
			f.mu.Lock()
			f.events = events
			f.mu.Unlock()
			c := dial(t, Config{Name: "fake", URL: url})
			c.mu.RLock()
			s := c.sess
			c.mu.RUnlock()
			res, err := c.Call(context.Background(), "big", nil)
			if err == nil || !strings.Contains(err.Error(), errTooLarge.Error()) {
				t.Fatalf("Call = %d bytes, %v; want an error saying %q", len(res.Value), err, errTooLarge)
			}
			c.mu.RLock()
			kept := c.sess == s && s.alive()
			c.mu.RUnlock()
			if !kept {
				t.Errorf("the call over the bound ended the session: %v", err)
			}
		})
	}
}

// boundedBody bounds a JSON body whole, and eventBody an event stream per
// event: events of any number, each under the bound, pass; one over it
// fails.
func TestBoundedBody(t *testing.T) {
	half := func() io.Reader { return io.LimitReader(repeat('x'), maxMessage/2+1) }
	over := func() io.Reader { return io.LimitReader(repeat('x'), maxMessage+1) }
	for _, tc := range []struct {
		name   string
		events bool
		body   []io.Reader
		fails  bool
	}{
		{"json under the bound", false, []io.Reader{half()}, false},
		{"json over the bound", false, []io.Reader{half(), half()}, true},
		{"events under the bound each", true, []io.Reader{s("data: "), half(), s("\n\ndata: "), half(), s("\r\n\r\ndata: "), half(), s("\n\n")}, false},
		{"one event over the bound", true, []io.Reader{s("data: "), over(), s("\n\n")}, true},
		{"lines that are not empty do not end an event", true, []io.Reader{s("data: "), half(), s("\n \ndata: "), half(), s("\n\n")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every read is full, so a read holds the end of one event and the
			// start of the next.
			var b io.Reader = &boundedBody{ReadCloser: io.NopCloser(full{io.MultiReader(tc.body...)})}
			if tc.events {
				b = &eventBody{ReadCloser: io.NopCloser(full{io.MultiReader(tc.body...)})}
			}
			_, err := io.Copy(io.Discard, b)
			if got := errors.Is(err, errTooLarge); got != tc.fails {
				t.Errorf("read error = %v, want too large: %v", err, tc.fails)
			}
		})
	}
}

// An event stream's event nested deeper than encoding/json goes is
// flattened, its data lines joined as a reader joins them and written
// back, its other lines kept; the events around it are handed on as they
// came, and so is one the stream ends inside.
func TestEventBodyFlattens(t *testing.T) {
	open, closed := strings.Repeat("[", maxDepth+1), strings.Repeat("]", maxDepth+1)
	stream := "id: 1\r\nevent: message\r\ndata: {\"a\":" + open[:5000] + "\r\ndata:" + open[5000:] + closed + "}\r\n\r\n" +
		": a comment\ndata: {\"b\":1}\n\n" + "data: " + open
	want := "id: 1\r\nevent: message\r\n" +
		"data: {\"a\":" + open[:5000] + "\ndata: " + open[5000:maxDepth-1] + string(tooDeep) + closed[:maxDepth-1] + "}\n\r\n" +
		": a comment\ndata: {\"b\":1}\n\n" + "data: " + open
	got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(strings.NewReader(stream))})
	if err != nil || string(got) != want {
		t.Errorf("read %.200q…, %v\nwant %.200q…", got, err, want)
	}
}

// full fills every read it can.
type full struct{ io.Reader }

func (f full) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.Reader, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

func s(text string) io.Reader { return strings.NewReader(text) }

// repeat is an endless reader of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	chunk := bytes.Repeat([]byte{byte(r)}, 32<<10)
	n := 0
	for n < len(p) {
		n += copy(p[n:], chunk)
	}
	return n, nil
}

// TestErrorAnswerIsClipped: mcp-go puts an error answer's body into its
// error message whole (up to the 64 KiB read of it); a server answering
// 500 with a megabyte that echoes the request's Authorization header must
// make neither a long error (logged, and shown to the program) nor one
// that repeats the credentials.
func TestErrorAnswerIsClipped(t *testing.T) {
	const token = "tok-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("the server broke on Authorization: " + r.Header.Get("Authorization") + " " + strings.Repeat("x", 1<<20)))
	}))
	t.Cleanup(srv.Close)
	c := open(t, Config{Name: "broken", URL: srv.URL, RestartDelay: time.Hour,
		Headers: map[string]string{"Authorization": "Bearer " + token}, Scrubber: scrub.New("Bearer "+token, token)})
	err := c.Down()
	msg := fmt.Sprint(err)
	if !strings.Contains(msg, "the server broke on Authorization: "+scrub.Placeholder) || len(msg) > maxErrorWords+1024 {
		t.Errorf("Down() = %.200s… (%d bytes), want the server's words scrubbed and clipped to about %d bytes", msg, len(msg), maxErrorWords)
	}
	if strings.Contains(msg, token) {
		t.Errorf("Down() = %.200s…, which repeats the token sent", msg)
	}
}

// TestJSONRPCErrorIsClipped: mcp-go makes a server's JSON-RPC error
// message its error's words whole, up to a message's 64 MiB; a server
// answering a start or a call with a long one that holds a secret
// codemode-mcp knows must make neither a long error (logged, and shown to
// the program) nor one that repeats the secret, over every transport.
func TestJSONRPCErrorIsClipped(t *testing.T) {
	const token = "tok-0123456789abcdef"
	// (Over stdio the answer travels in an environment variable: at most
	// 128 KiB.)
	words := "the server broke on " + token + " " + strings.Repeat("x", 64<<10)
	answer := `{"jsonrpc":"2.0","id":{id},"error":{"code":-32602,"message":"` + words + `"}}`
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		msg := fmt.Sprint(err)
		if !strings.Contains(msg, "the server broke on "+scrub.Placeholder+" xxx") || len(msg) > maxErrorWords+1024 {
			t.Errorf("%s = %.200s… (%d bytes), want the server's words scrubbed and clipped to about %d bytes", what, msg, len(msg), maxErrorWords)
		}
		if strings.Contains(msg, token) {
			t.Errorf("%s = %.200s…, which repeats the token", what, msg)
		}
		if !errors.Is(err, mcpgo.ErrInvalidParams) {
			t.Errorf("%s = %.200s…, which no longer wraps the error the code stands for", what, msg)
		}
	}
	for _, tr := range misansweredTransports {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			cfg := misansweredConfig(t, tr, map[string]string{"initialize": answer})
			cfg.Scrubber = scrub.New(token)
			cfg.Logger = testLogger(t)
			c, err := Dial(context.Background(), cfg)
			if err == nil {
				_ = c.Close()
			}
			check(t, "Dial()", err)

			cfg = misansweredConfig(t, tr, map[string]string{"tools/call": answer})
			cfg.Scrubber = scrub.New(token)
			cfg.Logger = testLogger(t)
			c = dial(t, cfg)
			_, err = c.Call(context.Background(), "flood", nil)
			check(t, "Call(flood)", err)
		})
	}
}
