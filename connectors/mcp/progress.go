package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

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
// any text a server sends. Safe for concurrent use.
type progressRelay struct {
	scrub *scrub.Scrubber // fixed at creation
	next  atomic.Uint64
	mu    sync.Mutex
	by    map[string]*connectors.CallHook // token -> receiver; guarded by mu
}

// maxProgressMessage bounds a relayed progress message, in bytes.
const maxProgressMessage = 1 << 10

type progressTokenKey struct{}

// watch registers the call about to be made with ctx, when ctx wants
// progress: it returns the context carrying the call's token (see
// tokenOf) and the function that ends the registration.
func (r *progressRelay) watch(ctx context.Context, name string) (context.Context, func()) {
	h := connectors.CallHookFrom(ctx)
	if !h.WantsProgress() {
		return ctx, func() {}
	}
	tok := name + "-" + strconv.FormatUint(r.next.Add(1), 10)
	r.mu.Lock()
	if r.by == nil {
		r.by = map[string]*connectors.CallHook{}
	}
	r.by[tok] = h
	r.mu.Unlock()
	return context.WithValue(ctx, progressTokenKey{}, tok), func() {
		r.mu.Lock()
		delete(r.by, tok)
		r.mu.Unlock()
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
	recv := r.by[tok]
	r.mu.Unlock()
	if recv == nil {
		return
	}
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
	recv.Progress(short.Clip(r.scrub.String(msg), maxProgressMessage))
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
