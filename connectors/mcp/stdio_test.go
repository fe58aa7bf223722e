package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
)

// A scriptedPeer is the far end of a stdioTransport over real pipes: the
// test reads what the transport writes and writes what a server would.
type scriptedPeer struct {
	t    *testing.T
	in   *bufio.Reader // what the transport wrote to the "child's stdin"
	out  *os.File      // the "child's stdout"
	outR *os.File      // its read end, which the transport reads
	tr   *stdioTransport
	stop func()
}

func newScriptedPeer(t *testing.T) *scriptedPeer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Wrapped as the connector's (transport.go), so that a write takes a
	// deadline the way it does there.
	tr := newStdioTransport(outR, rawpipe.Wrap(inW, 0), testLogger(t))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := &scriptedPeer{t: t, in: bufio.NewReader(inR), out: outW, outR: outR, tr: tr}
	p.stop = func() {
		_ = tr.Close()
		_ = outW.Close() // the child's stdout ends: the reader stops
		tr.wait()
		_ = outR.Close()
		_ = inR.Close()
	}
	t.Cleanup(p.stop)
	return p
}

// next returns the next message the transport sent, decoded.
func (p *scriptedPeer) next() map[string]any {
	p.t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("read what the transport sent: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("the transport sent %q, not one JSON message per line: %v", line, err)
	}
	return m
}

// send writes lines to the transport as the server would.
func (p *scriptedPeer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := p.out.WriteString(l + "\n"); err != nil {
			p.t.Fatal(err)
		}
	}
}

// callAsync starts a raw call and returns where its answer arrives.
func (p *scriptedPeer) callAsync(ctx context.Context, params string) <-chan callAnswer {
	ch := make(chan callAnswer, 1)
	go func() {
		r, err := p.tr.call(ctx, "tools/call", []byte(params))
		ch <- callAnswer{r, err}
	}()
	return ch
}

// call sends a request whose params are already encoded and waits for its
// answer (start, then wait).
func (t *stdioTransport) call(ctx context.Context, method string, params []byte) (rpcReply, error) {
	pc, err := t.start(ctx, method, params)
	if err != nil {
		return rpcReply{}, err
	}
	return pc.wait(ctx)
}

type callAnswer struct {
	reply rpcReply
	err   error
}

func idJSON(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m["id"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStdioCallRoundTrip(t *testing.T) {
	p := newScriptedPeer(t)
	ans := p.callAsync(context.Background(), `{"name":"get-sum","arguments":{"a":1}}`)
	req := p.next()
	if req["jsonrpc"] != "2.0" || req["method"] != "tools/call" {
		t.Fatalf("request = %v, want a JSON-RPC 2.0 tools/call", req)
	}
	if _, ok := req["id"].(string); !ok {
		t.Fatalf("request id = %#v, want a string id (apart from the client's numbers)", req["id"])
	}
	params, _ := req["params"].(map[string]any)
	if params["name"] != "get-sum" || fmt.Sprint(params["arguments"]) != "map[a:1]" {
		t.Fatalf("params = %v, want the given params unchanged", params)
	}
	p.send(`not json at all`, // ignored
		`{"jsonrpc":"2.0","id":"c999","result":{"content":[]}}`, // nobody asked: ignored
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"3"}]}}`, idJSON(t, req)))
	a := <-ans
	if a.err != nil || string(a.reply.result) != `{"content":[{"type":"text","text":"3"}]}` || a.reply.err != nil {
		t.Fatalf("call = %s, %v, %v; want the raw result", a.reply.result, a.reply.err, a.err)
	}
}

func TestStdioAnswersOutOfOrder(t *testing.T) {
	p := newScriptedPeer(t)
	first := p.callAsync(context.Background(), `{"name":"a"}`)
	r1 := p.next()
	second := p.callAsync(context.Background(), `{"name":"b"}`)
	r2 := p.next()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"n":2}}`, idJSON(t, r2)),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such tool"}}`, idJSON(t, r1)))
	if a := <-second; a.err != nil || string(a.reply.result) != `{"n":2}` {
		t.Errorf("second call = %s, %v; want {\"n\":2}", a.reply.result, a.err)
	}
	a := <-first
	if a.err != nil || a.reply.err == nil || a.reply.err.Message != "no such tool" {
		t.Errorf("first call = %+v, %v; want the JSON-RPC error", a.reply.err, a.err)
	}
}

func TestStdioLongLine(t *testing.T) {
	p := newScriptedPeer(t)
	ans := p.callAsync(context.Background(), `{}`)
	req := p.next()
	big := strings.Repeat("x", 3*readBuffer)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"text":%q}}`, idJSON(t, req), big))
	a := <-ans
	var got struct{ Text string }
	if a.err != nil || json.Unmarshal(a.reply.result, &got) != nil || got.Text != big {
		t.Fatalf("a %d-byte answer did not arrive whole (err %v)", len(big), a.err)
	}
}

// A server that writes more than maxMessage without ending its line ends the
// transport, its call failing with why, instead of having its output
// gathered without end.
func TestStdioOverlongLineEndsTheTransport(t *testing.T) {
	p := newScriptedPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ans := p.callAsync(ctx, `{}`)
	p.next()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		_, _ = p.out.Write(bytes.Repeat([]byte("x"), maxMessage+1<<20))
		cancel() // all of it was read: nothing stopped the reading
	}()
	a := <-ans
	var te *transport.Error
	if !errors.As(a.err, &te) || !errors.Is(a.err, errLongLine) {
		t.Fatalf("call error = %v, want a transport error saying the line is too long", a.err)
	}
	if !p.tr.ended() {
		t.Error("the transport goes on after too long a line")
	}
	_ = p.outR.Close() // the writer, blocked on a full pipe, fails
	<-wrote
}

func TestStdioCancelTellsTheServer(t *testing.T) {
	p := newScriptedPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	ans := p.callAsync(ctx, `{}`)
	req := p.next()
	cancel()
	a := <-ans
	if !errors.Is(a.err, context.Canceled) {
		t.Fatalf("call error = %v, want context.Canceled", a.err)
	}
	n := p.next()
	params, _ := n["params"].(map[string]any)
	if n["method"] != "notifications/cancelled" || fmt.Sprint(params["requestId"]) != fmt.Sprint(req["id"]) {
		t.Fatalf("after the cancellation the server got %v, want notifications/cancelled for %v", n, req["id"])
	}
	// A late answer to the cancelled request is dropped.
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, idJSON(t, req)))
}

// A call whose context ends around its write, but not while its line is
// cut, fails with the context's error and leaves the transport to the
// calls after it: only a cut line closes it. Here the context has ended
// before the call, so the write is either never begun or whole (a line
// this short fits the pipe); each round is a fresh chance for the cancel
// to land after the line went out.
func TestStdioCancelledCallKeepsTheTransport(t *testing.T) {
	p := newScriptedPeer(t)
	go func() { _, _ = io.Copy(io.Discard, p.in) }() // a server reading its stdin
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		if _, err := p.tr.call(ctx, "tools/call", []byte(`{}`)); !errors.Is(err, context.Canceled) {
			t.Fatalf("call %d = %v, want context.Canceled", i, err)
		}
		if p.tr.ended() {
			t.Fatalf("call %d, cancelled before it began, closed the transport", i)
		}
	}
}

func TestStdioEndOfOutputFailsCalls(t *testing.T) {
	p := newScriptedPeer(t)
	ans := p.callAsync(context.Background(), `{}`)
	p.next()
	_ = p.out.Close() // the server's stdout ends with the call unanswered
	a := <-ans
	var te *transport.Error
	if !errors.As(a.err, &te) || !errors.Is(a.err, transport.ErrTransportClosed) {
		t.Fatalf("call error = %v, want a transport error (transport closed)", a.err)
	}
	if _, err := p.tr.call(context.Background(), "tools/call", []byte(`{}`)); !errors.As(err, &te) {
		t.Fatalf("a call after the end = %v, want a transport error", err)
	}
}

func TestStdioServerRequestsAndNotifications(t *testing.T) {
	p := newScriptedPeer(t)
	// Without a handler, a request from the server is refused.
	p.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := p.next(); idJSON(t, m) != "7" || m["error"] == nil {
		t.Fatalf("answer to an unhandled request = %v, want an error for id 7", m)
	}
	got := make(chan mcpgo.JSONRPCNotification, 1)
	p.tr.SetNotificationHandler(func(n mcpgo.JSONRPCNotification) { got <- n })
	p.tr.SetRequestHandler(func(_ context.Context, r transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: r.ID, Result: json.RawMessage(`{"pong":true}`)}, nil
	})
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
	if n := fixture.Wait(t, "the notification at the handler", got); n.Method != "notifications/tools/list_changed" {
		t.Errorf("notification = %q", n.Method)
	}
	if m := p.next(); idJSON(t, m) != `"s1"` || fmt.Sprint(m["result"]) != "map[pong:true]" {
		t.Fatalf("answer to ping = %v, want the handler's result for id s1", m)
	}
}

func TestStdioRequestMetaComesFromTheClient(t *testing.T) {
	p := newScriptedPeer(t)
	if p.tr.meta.Load() != nil {
		t.Fatal("request _meta known before the client sent anything")
	}
	ans := make(chan error, 1)
	go func() {
		req := transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcpgo.NewRequestId(int64(1)), Method: "tools/list",
			Params: map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
		_, err := p.tr.SendRequest(context.Background(), req)
		ans <- err
	}()
	req := p.next()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, idJSON(t, req)))
	if err := <-ans; err != nil {
		t.Fatal(err)
	}
	meta := p.tr.meta.Load()
	if meta == nil || string(*meta) != `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}` {
		t.Fatalf("request _meta = %v, want the client's", meta)
	}
}

func TestNeedsInput(t *testing.T) {
	for _, tt := range []struct {
		result string
		want   bool
	}{
		{`{"resultType":"input_required","inputRequests":{}}`, true},
		{`{"content":[{"type":"text","text":"input_required"}]}`, false}, // only mentions it
		{`{"resultType":"complete","content":[]}`, false},
		{`{"content":[]}`, false},
	} {
		if got := needsInput(json.RawMessage(tt.result)); got != tt.want {
			t.Errorf("needsInput(%s) = %v, want %v", tt.result, got, tt.want)
		}
	}
}

// TestStdioCallsTakeTheRawPath checks, against the real fixture server,
// that tools/call over stdio goes through the transport's raw path with
// the _meta mcp-go's client sends (protocol 2026-07-28), not through the
// client.
func TestStdioCallsTakeTheRawPath(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	c.mu.RLock()
	st := c.sess.stdio
	c.mu.RUnlock()
	meta := st.meta.Load()
	if meta == nil || !strings.Contains(string(*meta), "io.modelcontextprotocol/protocolVersion") {
		t.Fatalf("request _meta = %v, want the client's protocol version", meta)
	}
	for i := range 3 {
		res, err := c.Call(context.Background(), "get-sum", json.RawMessage(`{"a":2,"b":3}`))
		if err != nil || string(res.Value) != "5" {
			t.Fatalf("Call(get-sum) = %+v, %v; want 5", res, err)
		}
		if n := st.nextID.Load(); n != int64(i+1) {
			t.Fatalf("after %d calls the raw path sent %d requests", i+1, n)
		}
	}
	// A tool error still arrives as an isError result.
	res, err := c.Call(context.Background(), "fail", json.RawMessage(`{}`))
	if err != nil || !res.IsError {
		t.Fatalf("Call(fail) = %+v, %v; want an isError result", res, err)
	}
}

// TestStdioInputRequiredGoesThroughTheClient checks that a tool answering
// input_required over stdio is sent again through mcp-go's client, which
// handles multi round-trips (and, with no elicitation handler, fails it).
func TestStdioInputRequiredGoesThroughTheClient(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	if _, err := c.Call(context.Background(), "ask", json.RawMessage(`{}`)); !errors.Is(err, errInputRequired) {
		t.Fatalf("Call(ask) error = %v, want errInputRequired", err)
	}
	// The session is still good.
	if res, err := c.Call(context.Background(), "get-sum", json.RawMessage(`{"a":1,"b":1}`)); err != nil || string(res.Value) != "2" {
		t.Fatalf("Call(get-sum) after ask = %+v, %v; want 2", res, err)
	}
}

// TestStdioWithoutDeadlines checks the transport over a reader that cannot
// take read deadlines: the watcher alone reads it.
func TestStdioWithoutDeadlines(t *testing.T) {
	outR, outW := io.Pipe()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := newStdioTransport(outR, inW, testLogger(t))
	if tr.outFD != nil {
		t.Fatal("an io.Pipe was taken for a reader with deadlines")
	}
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = tr.Close()
		_ = outW.Close()
		tr.wait()
		_ = inR.Close()
	}()
	in := bufio.NewReader(inR)
	for i := range 3 {
		ans := make(chan callAnswer, 1)
		go func() {
			r, err := tr.call(context.Background(), "tools/call", []byte(`{}`))
			ans <- callAnswer{r, err}
		}()
		line, err := in.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var req map[string]any
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%s,"result":{"n":%d}}`+"\n", idJSON(t, req), i); err != nil {
			t.Fatal(err)
		}
		if a := <-ans; a.err != nil || string(a.reply.result) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("call %d = %s, %v", i, a.reply.result, a.err)
		}
	}
}

// TestStdioAnswerReadByAnotherCaller checks that a call whose answer
// another caller read (and handed over) does not, on taking the reader's
// role next, wait for yet another line.
func TestStdioAnswerReadByAnotherCaller(t *testing.T) {
	p := newScriptedPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // a stuck call ends with the test
	for i := range 100 {
		a, b := fmt.Sprintf(`"a%d"`, i), fmt.Sprintf(`"b%d"`, i)
		chA, err := p.tr.send(context.Background(), a, []byte(`{"jsonrpc":"2.0","id":`+a+`,"method":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		chB, err := p.tr.send(context.Background(), b, []byte(`{"jsonrpc":"2.0","id":`+b+`,"method":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		p.next()
		p.next()
		// B's answer first: A, waiting first, reads it and hands it over,
		// then reads its own.
		p.send(`{"jsonrpc":"2.0","id":` + b + `,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":` + a + `,"result":{}}`)
		if _, err := p.tr.await(ctx, a, chA); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := p.tr.await(ctx, b, chB)
			done <- err
		}()
		if err := fixture.Wait(t, fmt.Sprintf("round %d: the end of a call whose answer was read", i), done); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// TestStdioStress drives the transport's reader hand-off (see
// stdioTransport) with many concurrent calls over real pipes: per round,
// 50 calls in flight, answered out of order in random batches written in
// random pieces (so that reads are interrupted mid-line while the reading
// role moves between callers and the watcher), with notifications mixed
// in, some calls cancelled, and the rest cut off by the server's stdout
// ending mid-line. Every answered call gets its own answer, every
// cancelled one context.Canceled, every cut-off one a closed transport,
// every notification is delivered once, and nothing stays registered.
func TestStdioStress(t *testing.T) {
	for round := range 20 {
		rng := rand.New(rand.NewPCG(uint64(round), 14))
		p := newScriptedPeer(t)
		const n = 50
		var notified atomic.Int64
		delivered := make(chan struct{}, 2*n) // at most one notification per call
		p.tr.SetNotificationHandler(func(mcpgo.JSONRPCNotification) {
			notified.Add(1)
			delivered <- struct{}{}
		})
		type result struct {
			i   int
			ans callAnswer
		}
		results := make(chan result, n)
		cancels := make([]context.CancelFunc, n)
		for i := range n {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			go func() {
				r, err := p.tr.call(ctx, "tools/call", fmt.Appendf(nil, `{"i":%d}`, i))
				results <- result{i, callAnswer{r, err}}
			}()
		}
		ids := map[int]string{}
		for len(ids) < n {
			m := p.next()
			params, _ := m["params"].(map[string]any)
			ids[int(params["i"].(float64))] = idJSON(t, m)
		}
		const (
			answered = iota
			cancelled
			cutOff
		)
		fate := make([]int, n)
		order := rng.Perm(n)
		var (
			batch strings.Builder
			notes int64
		)
		flush := func() {
			// In random pieces: a read may end anywhere in a line.
			b := batch.String()
			for len(b) > 0 {
				k := 1 + rng.IntN(min(len(b), 200))
				if _, err := p.out.WriteString(b[:k]); err != nil {
					t.Fatal(err)
				}
				b = b[k:]
				if rng.IntN(8) == 0 {
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
			}
			batch.Reset()
		}
		for _, i := range order {
			fate[i] = rng.IntN(3)
			switch fate[i] {
			case answered:
				fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%s,"result":{"i":%d}}`+"\n", ids[i], i)
			case cancelled:
				cancels[i]()
			}
			if rng.IntN(3) == 0 {
				batch.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n")
				notes++
			}
			if rng.IntN(4) == 0 {
				flush()
			}
		}
		flush()
		got := map[int]callAnswer{}
		for i := range n {
			if fate[i] == cutOff {
				continue
			}
			r := fixture.Wait(t, fmt.Sprintf("round %d: the answered and cancelled calls' return (%d so far)", round, len(got)), results)
			got[r.i] = r.ans
		}
		// Every notification arrives, even with no call in flight to read
		// it (the watcher does); one lost: go test's -timeout.
		for range notes {
			fixture.Wait(t, fmt.Sprintf("round %d: %d notifications (%d so far)", round, notes, notified.Load()), delivered)
		}
		// Half a line, then the end of stdout.
		if _, err := p.out.WriteString(`{"jsonrpc":"2.0","id":` + ids[order[0]]); err != nil {
			t.Fatal(err)
		}
		_ = p.out.Close()
		for len(got) < n {
			r := <-results
			got[r.i] = r.ans
		}
		for i, a := range got {
			switch fate[i] {
			case answered:
				if a.err != nil || string(a.reply.result) != fmt.Sprintf(`{"i":%d}`, i) {
					t.Fatalf("round %d: answered call %d = %s, %v", round, i, a.reply.result, a.err)
				}
			case cancelled:
				if !errors.Is(a.err, context.Canceled) {
					t.Fatalf("round %d: cancelled call %d = %s, %v", round, i, a.reply.result, a.err)
				}
			case cutOff:
				if !errors.Is(a.err, transport.ErrTransportClosed) {
					t.Fatalf("round %d: call %d cut off by the end of stdout = %s, %v; want transport closed", round, i, a.reply.result, a.err)
				}
			}
		}
		if _, err := p.tr.call(context.Background(), "tools/call", []byte(`{}`)); !errors.Is(err, transport.ErrTransportClosed) {
			t.Fatalf("round %d: a call after the end = %v", round, err)
		}
		if notified.Load() != notes {
			t.Fatalf("round %d: %d notifications, want %d", round, notified.Load(), notes)
		}
		p.tr.mu.Lock()
		left, calls := len(p.tr.pending), p.tr.calls
		p.tr.mu.Unlock()
		if left != 0 || calls != 0 {
			t.Fatalf("round %d: %d requests still registered, %d counted in flight, after every call returned", round, left, calls)
		}
		for _, c := range cancels {
			c()
		}
		p.stop()
	}
}

// A server that stops reading its stdin holds the write in flight (a full
// pipe), and the writes queued behind it; a call keeps its deadline all
// the same. One whose context ends during its own write fails with the
// context's error and closes the transport (its line is cut, the stream
// mid-message); one whose context ends while it waits for its turn fails
// with it having written nothing, and the transport stays.
func TestStdioWriteKeepsTheCallersDeadline(t *testing.T) {
	big := `{"text":"` + strings.Repeat("x", 1<<20) + `"}` // far more than a pipe holds

	p := newScriptedPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	answer := p.callAsync(ctx, big)
	if _, err := io.ReadFull(p.in, make([]byte, 16)); err != nil { // the write has begun
		t.Fatal(err)
	}
	cancel()
	if a := <-answer; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("call cancelled during its write = %v, want context.Canceled", a.err)
	}
	if !p.tr.ended() {
		t.Error("the transport goes on after a line was cut")
	}

	p = newScriptedPeer(t)
	stuck := make(chan error, 1)
	go func() {
		n := mcpgo.JSONRPCNotification{JSONRPC: mcpgo.JSONRPC_VERSION}
		n.Method = "notifications/big"
		n.Params.AdditionalFields = map[string]any{"text": strings.Repeat("x", 1<<20)}
		stuck <- p.tr.SendNotification(context.Background(), n)
	}()
	if _, err := io.ReadFull(p.in, make([]byte, 16)); err != nil { // the notification holds the turn
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if a := <-p.callAsync(ctx, `{}`); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("call cancelled while waiting for its turn = %v, want context.Canceled", a.err)
	}
	if p.tr.ended() {
		t.Error("a call that wrote nothing ended the transport")
	}
	p.stop()
	if err := <-stuck; err == nil {
		t.Error("the notification cut by Close reports no error")
	}
}
