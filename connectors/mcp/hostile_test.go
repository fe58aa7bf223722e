package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestToolListIsBounded lists the tools of servers that page without end
// or list without measure: the listing stops at a bound, with an error
// saying which, instead of gathering what the server sends.
func TestToolListIsBounded(t *testing.T) {
	description := strings.Repeat("d", 6<<20)
	tests := []struct {
		name    string
		page    func(n int) string // the n-th page (from 0)
		wantErr string
	}{
		{"cursors without end", func(n int) string {
			return fmt.Sprintf(`{"tools":[{"name":"t%d"}],"nextCursor":"%d"}`, n, n+1)
		}, "more than 1000 pages"},
		{"too many tools", func(n int) string {
			var b strings.Builder
			b.WriteString(`{"tools":[`)
			for i := range 1000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"t%d_%d"}`, n, i)
			}
			fmt.Fprintf(&b, `],"nextCursor":"%d"}`, n+1)
			if n == 10 {
				return strings.Replace(b.String(), fmt.Sprintf(`"nextCursor":"%d"`, n+1), `"nextCursor":""`, 1)
			}
			return b.String()
		}, "more than 10000 tools"},
		{"too many bytes", func(n int) string {
			next := strconv.Itoa(n + 1)
			if n == 2 {
				next = ""
			}
			return fmt.Sprintf(`{"tools":[{"name":"t%d","description":%q}],"nextCursor":%q}`, n, description, next)
		}, "more than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := startFake(t, nil, nil)
			f.mu.Lock()
			f.page = func(cursor string) string {
				n, _ := strconv.Atoi(cursor)
				return tt.page(n)
			}
			f.mu.Unlock()
			// A generous start timeout: decoding megabytes under the race
			// detector is slow, and the bound, not the clock, must end it.
			_, err := Dial(context.Background(), Config{Name: "endless", URL: url, StartTimeout: 5 * time.Minute, Logger: testLogger(t)})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `"endless"`) {
				t.Fatalf("Dial = %v, want an error naming the connector and saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestHostileToolDefinitions lists tools whose names could pass for
// others when shown (control, bidi and zero-width characters), are longer
// than a tool name may be, or whose schemas are deeper than JSON decoders
// go or not objects: the names are left out with a warning, a schema that
// is not an object replaced by the default. (A schema deeper than
// encoding/json goes: TestTooDeepToolIsLeftOut.)
func TestHostileToolDefinitions(t *testing.T) {
	deep := strings.Repeat(`{"properties":{"a":`, 2000) + `{}` + strings.Repeat(`}}`, 2000)
	page := `{"tools":[
		{"name":"ok"},
		{"name":"evil\u202etxt.exe"},
		{"name":"bell\u0007"},
		{"name":"c1\u0085"},
		{"name":"zero\u200bwidth"},
		{"name":"` + strings.Repeat("a", 129) + `"},
		{"name":"deep","inputSchema":` + deep + `},
		{"name":"list","inputSchema":[{"type":"object"}]}
	]}`
	_, url := startFake(t, map[string]string{"": page}, nil)
	rec := &recorder{}
	c := dial(t, Config{Name: "hostile", URL: url, Logger: slog.New(rec)})
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range tools {
		got[tl.SourceName] = string(tl.InputSchema)
	}
	want := map[string]string{"ok": `{"type":"object"}`, "deep": deep, "list": `{"type":"object"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	skipped := rec.find(func(r map[string]string) bool { return r["msg"] == "skipping a malformed tool definition" })
	if len(skipped) != 5 {
		t.Errorf("%d warnings of skipped tools, want 5: %v", len(skipped), skipped)
	}
	for _, r := range skipped {
		if strings.ContainsAny(r["err"], "\u202e\u0007\u0085\u200b") || len(r["err"]) > 200 {
			t.Errorf("the warning %q echoes the name as sent", r["err"])
		}
	}
}

// TestTooDeepToolIsLeftOut lists a page with a tool whose schema is
// nested deeper than encoding/json goes, and calls a tool whose result is
// that deep, over stdio, streamable HTTP answering JSON or an event
// stream, and legacy SSE: the tool is left out with a warning naming it,
// and the others are listed; the call fails alone, saying the result is
// too deep, and the session is kept. Before, over stdio the page was
// dropped and the listing waited for it; as JSON the page failed and the
// call retired the session as a transport failure; as events (legacy SSE
// or streamable HTTP) the message was dropped, the listing left waiting
// until the start timed out.
func TestTooDeepToolIsLeftOut(t *testing.T) {
	deep := strings.Repeat(`[`, maxDepth+1) + strings.Repeat(`]`, maxDepth+1)
	page := `{"tools":[{"name":"ok"},{"name":"deep","inputSchema":{"type":"object","default":` + deep + `}},{"name":"flood"}]}`
	result := `{"content":[],"structuredContent":` + deep + `}`
	fake := func(events, sse bool) func(t *testing.T) Config {
		return func(t *testing.T) Config {
			f, url := startFake(t, map[string]string{"": page}, map[string]string{"flood": result})
			f.mu.Lock()
			f.events = events
			if sse {
				f.sse = make(chan string, 16)
			}
			f.mu.Unlock()
			return Config{Name: "hostile", URL: url, SSE: sse}
		}
	}
	for _, tc := range []struct {
		name   string
		config func(t *testing.T) Config
	}{
		{"stdio", func(*testing.T) Config {
			return Config{Name: "hostile", Command: os.Args[0], Env: map[string]string{pageEnv: page, resultEnv: result}}
		}},
		{"http", fake(false, false)},
		{"http events", fake(true, false)},
		{"sse", fake(false, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := tc.config(t)
			cfg.Logger = slog.New(rec)
			c := dial(t, cfg)
			tools, err := c.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.SourceName)
			}
			if want := []string{"ok", "flood"}; !slices.Equal(names, want) {
				t.Errorf("tools %q, want %q", names, want)
			}
			skipped := rec.find(func(r map[string]string) bool {
				return r["msg"] == "skipping a malformed tool definition" && strings.Contains(r["err"], `"deep" is nested more than 10000 levels deep`)
			})
			if len(skipped) != 1 {
				t.Errorf("%d warnings naming the tool too deep, want 1", len(skipped))
			}
			c.mu.RLock()
			s := c.sess
			c.mu.RUnlock()
			_, err = c.Call(context.Background(), "flood", nil)
			if err == nil || !strings.Contains(err.Error(), "the result is nested more than 10000 levels deep") || !strings.Contains(err.Error(), `"hostile"`) {
				t.Errorf("Call = %v, want an error naming the connector and saying the result is too deep", err)
			}
			c.mu.RLock()
			kept := c.sess == s && s.alive()
			c.mu.RUnlock()
			if !kept {
				t.Errorf("the call too deep ended the session")
			}
		})
	}
}

// TestOversizedToolPageIsRefusedUndecoded lists one page of 1.2 million
// minimal tools (15 MiB): it is refused for its count before mcp-go
// decodes it into typed tools, which would take some 2.5 GiB of
// allocations (900 MiB live).
func TestOversizedToolPageIsRefusedUndecoded(t *testing.T) {
	const n = (15 << 20) / 13
	page := `{"tools":[` + strings.Repeat(`{"name":"a"},`, n-1) + `{"name":"a"}]}`
	_, url := startFake(t, map[string]string{"": page}, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Dial(context.Background(), Config{Name: "wide", URL: url, StartTimeout: 5 * time.Minute, Logger: testLogger(t)})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 tools") {
		t.Fatalf("Dial = %v, want a too-many-tools error", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<30 {
		t.Errorf("listing the page allocated %d MiB, want under 1 GiB (mcp-go decoded it)", got>>20)
	}
}

// TestHostileCallResults calls tools whose results are built to cost: a
// million empty content items are refused before they are decoded (each
// would take some 40 times its bytes), and an image's base64 data, however
// large, reaches the program as its size.
func TestHostileCallResults(t *testing.T) {
	calls := map[string]string{
		"many":  `{"content":[` + strings.Repeat(`{},`, 1_000_000) + `{}]}`,
		"image": `{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 8<<20) + `"}]}`,
	}
	_, url := startFake(t, map[string]string{"": `{"tools":[{"name":"many"},{"name":"image"}]}`}, calls)
	c := dial(t, Config{Name: "costly", URL: url})
	_, err := c.Call(context.Background(), "many", nil)
	if err == nil || !strings.Contains(err.Error(), "more than 100000 content items") || !strings.Contains(err.Error(), `"costly"`) {
		t.Errorf("Call(many) = %v, want a too-many-items error naming the connector", err)
	}
	res, err := c.Call(context.Background(), "image", nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, res.Value, json.RawMessage(`[{"type":"image","mimeType":"image/png","data":"<8388608 bytes base64>"}]`))
}

// TestServerRequestFloodIsBounded calls a stdio server that sends 20,000
// pings and then no longer reads its input: the answers the pipe cannot
// take are not left waiting, one goroutine each, but the pings past a
// bound go unanswered, and the call still gets its result.
func TestServerRequestFloodIsBounded(t *testing.T) {
	c := dial(t, Config{Name: "flood", Command: os.Args[0], Env: map[string]string{floodEnv: "20000"}})
	before := runtime.NumGoroutine()
	res, err := c.Call(context.Background(), "flood", nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, res.Value, json.RawMessage(`"flooded"`))
	if grew := runtime.NumGoroutine() - before; grew > maxServerRequests+16 {
		t.Errorf("%d more goroutines after the flood, want at most %d", grew, maxServerRequests+16)
	}
}

// TestRemoteServerRequestFloodIsBounded calls a streamable-HTTP server
// that answers with an event stream of 1,000 pings and holds every answer
// posted to it: mcp-go posts each on a goroutine and a connection of its
// own, so at most maxServerRequests are in flight, the pings past them
// unanswered with a warning, and the call still gets its result.
func TestRemoteServerRequestFloodIsBounded(t *testing.T) {
	const pings = 1000
	f, url := startFake(t, map[string]string{"": `{"tools":[{"name":"flood"}]}`}, nil)
	f.mu.Lock()
	f.pings, f.answered, f.hold = pings, make(chan struct{}, pings), make(chan struct{})
	f.mu.Unlock()
	warned := make(chan struct{})
	logger := slog.New(&onMessage{Handler: testLogger(t).Handler(), msg: "the MCP server sends requests faster than it takes the answers; leaving those past the bound unanswered",
		seen: sync.OnceFunc(func() { close(warned) })})
	c := dial(t, Config{Name: "flood", URL: url, Logger: logger})
	called := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "flood", nil)
		called <- err
	}()
	// The answers in flight are maxServerRequests once the others have
	// been refused (warned), unless more arrive first. The call's result
	// waits meanwhile (f.hold).
	held := 0
	for held <= maxServerRequests && (warned != nil || held < maxServerRequests) {
		select {
		case <-f.answered:
			held++
		case <-warned:
			warned = nil
		}
	}
	if held > maxServerRequests {
		t.Errorf("more than %d answers to the server's %d pings in flight at once, want at most %d", held-1, pings, maxServerRequests)
	}
	close(f.hold)
	if err := <-called; err != nil {
		t.Fatal(err)
	}
}

// onMessage is a slog handler that calls seen (once) at each record whose
// message is msg.
type onMessage struct {
	slog.Handler
	msg  string
	seen func()
}

func (h *onMessage) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.seen()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *onMessage) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &onMessage{Handler: h.Handler.WithAttrs(attrs), msg: h.msg, seen: h.seen}
}
