package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// progressRelay passes a server's notifications/progress about a call to
// the connectors.CallHook of the context the call was made with: the call
// goes out with a progress token of ours, and the notifications that carry
// it are routed back. Their messages reach the client that started the
// run, so they are scrubbed of secrets and cut to maxProgressMessage, as
// any text a server sends, and relayed at most once per progressInterval
// per call (see progressWatch). Safe for concurrent use.
type progressRelay struct {
	scrub *scrub.Scrubber // fixed at creation
	next  atomic.Uint64
	mu    sync.Mutex
	by    map[string]*progressWatch // token -> receiver; guarded by mu
}

// maxProgressMessage bounds a relayed progress message, in bytes.
const maxProgressMessage = 1 << 10

// progressInterval is the least time between two progress reports relayed
// for one call. A server may report as often as it likes (each report
// would become a notification to our client, and a scrubbed copy of its
// message); those that come sooner are coalesced, the latest winning,
// since it says where the call is now.
const progressInterval = 100 * time.Millisecond

type progressTokenKey struct{}

// A progressWatch is one call's receiver of progress reports: a report
// is relayed at once when the last one relayed is progressInterval old,
// else kept (replacing the one kept before) and relayed when it is.
// The one kept when the call ends is relayed then.
type progressWatch struct {
	r    *progressRelay
	hook *connectors.CallHook

	mu      sync.Mutex
	last    time.Time      // when a report was last relayed
	pending map[string]any // the latest report not yet relayed; nil if none
	timer   *time.Timer    // relays pending; nil when not set
	done    bool           // the call ended
}

// watch registers the call about to be made with ctx, when ctx wants
// progress: it returns the context carrying the call's token (see
// tokenOf) and the function that ends the registration, relaying the
// report kept, if any; no report is relayed after it returns.
func (r *progressRelay) watch(ctx context.Context, name string) (context.Context, func()) {
	h := connectors.CallHookFrom(ctx)
	if !h.WantsProgress() {
		return ctx, func() {}
	}
	tok := name + "-" + strconv.FormatUint(r.next.Add(1), 10)
	w := &progressWatch{r: r, hook: h}
	r.mu.Lock()
	if r.by == nil {
		r.by = map[string]*progressWatch{}
	}
	r.by[tok] = w
	r.mu.Unlock()
	return context.WithValue(ctx, progressTokenKey{}, tok), func() {
		r.mu.Lock()
		delete(r.by, tok)
		r.mu.Unlock()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
		if w.timer != nil {
			w.timer.Stop()
		}
		if w.pending != nil {
			w.relayLocked(w.pending)
		}
	}
}

// tokenOf returns the progress token of the call made with ctx, or "".
func tokenOf(ctx context.Context) string {
	tok, _ := ctx.Value(progressTokenKey{}).(string)
	return tok
}

// deliver routes a notifications/progress to its call, if it is ours.
func (r *progressRelay) deliver(n mcpgo.JSONRPCNotification) {
	f := n.Params.AdditionalFields // decoded by encoding/json: numbers are float64
	tok, ok := f["progressToken"].(string)
	if !ok {
		return
	}
	r.mu.Lock()
	w := r.by[tok]
	r.mu.Unlock()
	if w != nil {
		w.offer(f)
	}
}

// offer relays the report f, or keeps it for later (see progressWatch).
func (w *progressWatch) offer(f map[string]any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch wait := progressInterval - time.Since(w.last); {
	case w.done:
	case w.timer == nil && wait <= 0:
		w.relayLocked(f)
	default:
		w.pending = f
		if w.timer == nil {
			w.timer = time.AfterFunc(wait, w.flush)
		}
	}
}

// flush relays the report kept, once progressInterval has passed.
func (w *progressWatch) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if !w.done && w.pending != nil {
		w.relayLocked(w.pending)
	}
}

// relayLocked passes the report f to the call's hook; w.mu is held, so
// reports reach it one at a time, in order.
func (w *progressWatch) relayLocked(f map[string]any) {
	w.last, w.pending = time.Now(), nil
	progress, _ := f["progress"].(float64)
	total, _ := f["total"].(float64)
	msg, _ := f["message"].(string)
	switch {
	case msg != "":
	case total > 0:
		msg = fmt.Sprintf("%g of %g", progress, total)
	default:
		msg = fmt.Sprintf("%g", progress)
	}
	w.hook.Progress(short.Clip(w.r.scrub.String(msg), maxProgressMessage))
}

// withMeta adds key with the string value to a request's _meta object
// (which may be empty); an empty value adds nothing. key is one of ours,
// not already in meta.
func withMeta(meta json.RawMessage, key, value string) json.RawMessage {
	if value == "" {
		return meta
	}
	t, _ := json.Marshal(value)
	entry := append(append([]byte(`"`+key+`"`), ':'), t...)
	if len(meta) < 2 || string(meta) == "{}" || string(meta) == "null" {
		return append(append([]byte{'{'}, entry...), '}')
	}
	out := append([]byte{}, meta[:len(meta)-1]...)
	out = append(out, ',')
	out = append(out, entry...)
	return append(out, '}')
}
