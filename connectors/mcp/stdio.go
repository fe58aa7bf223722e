package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// stdioTransport is the JSON-RPC transport of a stdio server: one message
// per line on the child's stdin and stdout. mcp-go's client uses it for the
// handshake, tools/list, notifications and the server's own requests;
// Connector.Call uses its raw path (start, then pendingCall.wait) for
// tools/call, which skips the client's per-request re-encoding of the
// params. Each incoming line is decoded once.
//
// Who reads stdout: a caller waiting for an answer reads it itself when no
// one else is reading (so the answer to a lone call needs no hand-off
// between goroutines, which costs a thread wake-up per call), dispatching
// whatever else arrives; a watcher goroutine reads while no call has been
// in flight for idleGrace, so notifications and the server's requests are
// seen between calls. A call that starts while the watcher reads makes it
// step aside (a read deadline in the past interrupts its read).
//
// Invariant: only the holder of role reads out, and it dispatches every
// line it reads (to the pending channel of the answer's id, buffered so
// that dispatching never blocks, or to a handler); a line cut by an
// interrupted read waits in partial for the next holder, so no byte is
// read twice or lost. A caller gives role back before it returns, and
// when it gives it back with calls still waiting, one of them (or the
// watcher, once idle) takes it. TestStdioStress checks this with 50 calls
// in flight answered out of order in random pieces, cancellations,
// notifications and the end of stdout mid-line.
//
// Why: a reader goroutine hands each answer to its caller through a
// channel, a thread wake-up per call. Measured when it landed, the
// connector alone took 249 µs per call with one and 170 µs without; re-measured
// 2026-11-24 (8 interleaved rounds against a single reader goroutine
// with the same raw tools/call path), 205 against 262 µs, and a call
// inside a program 281 against 348 µs in process (BENCHMARKS.md, "The
// stdio connector").
type stdioTransport struct {
	in     io.WriteCloser // the child's stdin
	out    *bufio.Reader  // the child's stdout; read by the holder of role
	outFD  deadliner      // the child's stdout, to interrupt a read
	logger *slog.Logger

	// role is the right to read out: a token taken from the channel.
	role chan struct{}
	// partial is a line whose read was interrupted; guarded by role.
	partial []byte
	// wake tells the watcher that no call may be in flight.
	wake      chan struct{}
	idleTimer *time.Timer

	writing chan struct{} // held (a token in it) by the one write on stdin at a time
	// requests bounds the server's requests being answered (handle).
	requests *requestBound

	mu        sync.Mutex
	pending   map[string]chan rpcReply // by the id's JSON text; guarded by mu
	calls     int                      // requests waiting for an answer; guarded by mu
	watching  bool                     // the watcher holds role; guarded by mu
	onNotify  func(mcpgo.JSONRPCNotification)
	onRequest transport.RequestHandler
	// meta is the _meta mcp-go's client puts in every request on protocol
	// 2026-07-28 (empty on earlier versions), as seen on its tools/list
	// request; nil until one was seen.
	meta atomic.Pointer[json.RawMessage]

	nextID atomic.Int64
	// life ends when the transport is closed or stdout ends, and with it
	// the handling of the server's requests (whose context it is); its
	// cause is what calls then fail with.
	life   context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the reader, request handlers, cancellations
}

// rpcReply is the answer to one request: a result or a JSON-RPC error.
type rpcReply struct {
	result json.RawMessage
	err    *mcpgo.JSONRPCErrorDetails
}

// rpcMessage is any incoming message, decoded once: a response has an id
// and no method, a request both, a notification only a method.
type rpcMessage struct {
	ID     json.RawMessage            `json:"id"`
	Method string                     `json:"method"`
	Result json.RawMessage            `json:"result"`
	Error  *mcpgo.JSONRPCErrorDetails `json:"error"`
}

// deadliner is a reader whose reads can be given a deadline (an *os.File
// pipe).
type deadliner interface {
	SetReadDeadline(time.Time) error
}

// writeDeadliner is a writer whose writes can be given a deadline (an
// *os.File pipe, a rawpipe.Pipe).
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// idleGrace is how long stdout goes unread after the last call ends
// before the watcher reads it: long enough that back-to-back calls never
// wait for the watcher to step aside, short enough that a notification
// between calls is seen at once for any purpose.
const idleGrace = 2 * time.Millisecond

// readBuffer is the size of the stdout buffer (longer lines still work;
// they are gathered in pieces).
const readBuffer = 64 << 10

// maxMessage bounds one message from a server (a line on a stdio
// server's stdout, a remote server's JSON answer or event: boundedBodies),
// so that a server writing without end is not gathered without end: past
// it the transport ends (errLongLine) or the request fails. A result that
// large could not reach a program in a sandbox worker either (its frames
// are bounded alike).
const maxMessage = 64 << 20

// errLongLine is why a transport ended whose server wrote a line longer
// than maxMessage.
var errLongLine = fmt.Errorf("the server wrote a message of more than %d MiB (one line on its stdout)", maxMessage>>20)

var _ transport.BidirectionalInterface = (*stdioTransport)(nil)

// newStdioTransport returns a transport over a child's stdout (out) and
// stdin (in). When out cannot take a read deadline, only the watcher reads
// it.
func newStdioTransport(out io.Reader, in io.WriteCloser, logger *slog.Logger) *stdioTransport {
	t := &stdioTransport{
		in:      in,
		out:     bufio.NewReaderSize(out, readBuffer),
		logger:  logger,
		role:    make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),
		pending: map[string]chan rpcReply{},

		requests: newRequestBound(logger),
		writing:  make(chan struct{}, 1),
	}
	t.life, t.cancel = context.WithCancelCause(context.Background())
	if d, ok := out.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		t.outFD = d
	}
	t.role <- struct{}{}
	t.idleTimer = time.AfterFunc(time.Hour, t.signalIdle)
	t.idleTimer.Stop()
	return t
}

// Start starts the watcher. mcp-go's client calls it once.
func (t *stdioTransport) Start(context.Context) error {
	t.wg.Go(t.watch)
	t.signalIdle()
	return nil
}

func (t *stdioTransport) signalIdle() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Close stops the transport: calls waiting for an answer fail, and the
// child's stdin is closed. The reader ends when stdout does (the process
// owner closes it once the child is gone); wait waits for it.
func (t *stdioTransport) Close() error {
	t.end(transport.ErrTransportClosed)
	t.idleTimer.Stop()
	// Not while writing: closing ends a write blocked on a full pipe.
	if err := t.in.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("close stdin: %w", err)
	}
	return nil
}

// wait waits for the reader and the goroutines the transport started.
func (t *stdioTransport) wait() { t.wg.Wait() }

// end marks the transport ended, its calls failing with cause (under mu:
// see spawn).
func (t *stdioTransport) end(cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancel(cause)
}

// ended reports whether the transport was closed or the child's stdout
// ended.
func (t *stdioTransport) ended() bool { return t.life.Err() != nil }

// GetSessionId is empty: stdio has no sessions.
func (t *stdioTransport) GetSessionId() string { return "" }

// SetNotificationHandler sets what receives the server's notifications.
func (t *stdioTransport) SetNotificationHandler(h func(mcpgo.JSONRPCNotification)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onNotify = h
}

// SetRequestHandler sets what answers the server's requests (ping,
// sampling, elicitation, roots).
func (t *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onRequest = h
}

// SendRequest sends an mcp-go request, through tap, and waits for its
// answer.
func (t *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return tap(ctx, req, t.logger, t.request)
}

func (t *stdioTransport) request(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	msg, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	if req.Method == string(mcpgo.MethodToolsList) {
		t.noteMeta(msg)
	}
	id, err := json.Marshal(req.ID)
	if err != nil {
		return nil, fmt.Errorf("encode request id: %w", err)
	}
	ch, err := t.send(ctx, string(id), msg)
	if err != nil {
		return nil, err
	}
	reply, err := t.await(ctx, string(id), ch)
	if err != nil {
		return nil, err
	}
	return &transport.JSONRPCResponse{JSONRPC: mcpgo.JSONRPC_VERSION, ID: req.ID, Result: reply.result, Error: reply.err}, nil
}

// noteMeta keeps the _meta of a request mcp-go's client sent.
func (t *stdioTransport) noteMeta(msg []byte) {
	var req struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &req); err != nil {
		return
	}
	t.meta.Store(&req.Params.Meta)
}

// A pendingCall is a request sent by start, awaiting its answer.
type pendingCall struct {
	t  *stdioTransport
	id string // JSON text
	ch chan rpcReply
}

// start sends a request whose params are already encoded. The request gets
// an id of its own ("c1", "c2"…), apart from the client's numbers.
func (t *stdioTransport) start(ctx context.Context, method string, params []byte) (*pendingCall, error) {
	id := `"c` + strconv.FormatInt(t.nextID.Add(1), 10) + `"`
	msg := make([]byte, 0, len(params)+len(method)+len(id)+48)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"method":"`...)
	msg = append(msg, method...) // a protocol method name: nothing to escape
	msg = append(msg, `","params":`...)
	msg = append(msg, params...)
	msg = append(msg, '}')
	ch, err := t.send(ctx, id, msg)
	if err != nil {
		return nil, err
	}
	return &pendingCall{t: t, id: id, ch: ch}, nil
}

// wait waits for the answer. When ctx ends first, the server is told to
// cancel the request. It must be called once.
func (pc *pendingCall) wait(ctx context.Context) (rpcReply, error) {
	reply, err := pc.t.await(ctx, pc.id, pc.ch)
	if err != nil && ctx.Err() != nil {
		pc.t.cancelRequest(json.RawMessage(pc.id), context.Cause(ctx))
	}
	return reply, err
}

// send registers request id (its JSON text) and writes msg; the answer
// will arrive on the returned channel (see await). A transport failure
// is a *transport.Error.
func (t *stdioTransport) send(ctx context.Context, id string, msg []byte) (chan rpcReply, error) {
	ch := make(chan rpcReply, 1)
	t.begin(id, ch)
	if err := t.write(ctx, msg); err != nil {
		t.finish(id)
		return nil, err
	}
	return ch, nil
}

// await waits for the answer to request id, sent by send, reading stdout
// itself when no one else does.
func (t *stdioTransport) await(ctx context.Context, id string, ch chan rpcReply) (rpcReply, error) {
	defer t.finish(id)
	role := t.role
	if t.outFD == nil {
		role = nil // only the watcher reads
	}
	for {
		select {
		case r := <-ch:
			return r, nil
		case <-ctx.Done():
			return rpcReply{}, ctx.Err()
		case <-t.life.Done():
			select {
			case r := <-ch: // answered just before stdout ended
				return r, nil
			default:
			}
			return rpcReply{}, transport.NewError(context.Cause(t.life))
		case <-role:
			if r, ok := t.readFor(ctx, ch); ok {
				return r, nil
			}
		}
	}
}

// begin registers a request waiting for its answer on ch; a watcher
// reading stdout is asked to step aside.
func (t *stdioTransport) begin(id string, ch chan rpcReply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[id] = ch
	t.calls++
	if t.calls == 1 {
		t.idleTimer.Stop()
	}
	if t.watching {
		t.interrupt()
	}
}

// finish forgets a request; once none is in flight, the watcher reads
// stdout again after idleGrace.
func (t *stdioTransport) finish(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, id)
	t.calls--
	if t.calls == 0 {
		t.idleTimer.Reset(idleGrace)
	}
}

// interrupt ends the read in progress, if any (and the next one, if none
// is: a deadline in the past is sticky until cleared).
func (t *stdioTransport) interrupt() {
	if t.outFD != nil {
		_ = t.outFD.SetReadDeadline(time.Unix(1, 0))
	}
}

// readFor reads stdout, holding role, until ch has the answer (ok) or ctx
// ends, the transport ends or stdout cannot be interrupted (then role goes
// back and ok is false).
func (t *stdioTransport) readFor(ctx context.Context, ch chan rpcReply) (r rpcReply, ok bool) {
	defer func() { t.role <- struct{}{} }()
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.interrupt()
	})
	defer stop()
	t.readWhile(func() bool {
		// The answer may have been read by whoever read before.
		select {
		case r, ok = <-ch:
			return false
		default:
		}
		// Clear a deadline meant for an earlier reader, then check what
		// would have interrupted this one.
		_ = t.outFD.SetReadDeadline(time.Time{})
		return ctx.Err() == nil
	})
	return r, ok
}

// readWhile reads and dispatches lines while the transport has not ended
// and more, asked before each read, says to go on; it reports whether the
// transport ended. Only the holder of role calls it.
func (t *stdioTransport) readWhile(more func() bool) (ended bool) {
	for !t.ended() && more() {
		line, err := t.readLine()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded): // interrupted: ask more again
		case err != nil:
			t.readFailed(err)
			return true
		default:
			t.dispatch(line)
		}
	}
	return t.ended()
}

// readLine reads one line, of at most maxMessage bytes, keeping what an
// interrupted read got so far. Only the holder of role calls it.
func (t *stdioTransport) readLine() ([]byte, error) {
	for {
		piece, err := t.out.ReadSlice('\n')
		switch {
		case err == nil && len(t.partial) == 0:
			return append([]byte(nil), piece...), nil // piece is the buffer's
		case len(t.partial)+len(piece) > maxMessage:
			t.partial = nil
			return nil, errLongLine
		}
		t.partial = append(t.partial, piece...)
		switch {
		case err == nil:
			line := t.partial
			t.partial = nil
			return line, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// readFailed ends the transport after stdout ended or failed; what came
// before the end is dispatched.
func (t *stdioTransport) readFailed(err error) {
	if len(bytes.TrimSpace(t.partial)) > 0 {
		t.dispatch(t.partial)
		t.partial = nil
	}
	switch {
	case errors.Is(err, errLongLine):
		t.logger.Warn("the MCP server wrote too long a message; dropping the connection", "limit_bytes", maxMessage)
		t.end(err)
		return
	case !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed):
		t.logger.Debug("reading the server's stdout failed", "err", err)
	}
	t.end(transport.ErrTransportClosed)
}

// write sends one message (a line) to the child, one at a time. A child
// that stops reading its stdin (a full pipe) holds the write, and those
// queued behind it, until it reads again; a caller keeps its deadline
// regardless: when ctx ends while it waits for its turn, or before its
// write began, it fails with ctx's error and has written nothing; when
// ctx ends during its own write, the write is interrupted (a deadline in
// the past; closing stdin where it takes none) and, if the line was cut,
// which would leave the stream mid-message, the transport is closed (the
// connector starts the server again) and it fails with ctx's error. A
// line written in full stays, whenever ctx ends: the call then fails as
// any cancelled call does, telling the server.
func (t *stdioTransport) write(ctx context.Context, msg []byte) error {
	select {
	case <-t.life.Done():
		return transport.NewError(context.Cause(t.life))
	default:
	}
	select {
	case t.writing <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.life.Done():
		return transport.NewError(context.Cause(t.life))
	}
	defer func() { <-t.writing }()
	in, _ := t.in.(writeDeadliner)
	var (
		mu                sync.Mutex
		done, interrupted bool
	)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if done {
				return
			}
			interrupted = true
			if in == nil || in.SetWriteDeadline(time.Unix(1, 0)) != nil {
				t.logger.Warn("the MCP server does not read its stdin; closing it", "err", context.Cause(ctx))
				_ = t.Close()
			}
		})
		defer stop()
	}
	// One write per message: msg has room for the newline or gets it.
	line := append(msg, '\n')
	n, err := t.in.Write(line)
	mu.Lock()
	done = true
	if interrupted && in != nil {
		_ = in.SetWriteDeadline(time.Time{}) // for the next writer
	}
	mu.Unlock()
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil:
		return transport.NewError(fmt.Errorf("write to the server: %w", err))
	case n > 0 && n < len(line) && !t.ended():
		t.logger.Warn("the MCP server does not read its stdin; closing it", "err", context.Cause(ctx))
		_ = t.Close()
	}
	return context.Cause(ctx)
}

// SendNotification sends a notification.
func (t *stdioTransport) SendNotification(ctx context.Context, n mcpgo.JSONRPCNotification) error {
	msg, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	return t.write(ctx, msg)
}

// cancelRequest tells the server to stop working on request id, off the
// caller's path (a server that does not read its stdin must not hold the
// caller up; closing the transport ends the write).
func (t *stdioTransport) cancelRequest(id json.RawMessage, reason error) {
	n := mcpgo.JSONRPCNotification{JSONRPC: mcpgo.JSONRPC_VERSION}
	n.Method = string(mcpgo.MethodNotificationCancelled)
	n.Params.AdditionalFields = map[string]any{"requestId": id, "reason": reason.Error()}
	t.spawn(func() {
		err := t.SendNotification(context.Background(), n)
		t.logger.Debug("told the server to cancel a request", "id", string(id), "err", err)
	})
}

// spawn runs f on a goroutine of the transport's (wait waits for it),
// unless the transport has ended. A caller's goroutine may spawn (a
// cancellation, a server request it read), and wait must not begin while
// one is being added with nothing else counted: under mu, spawn sees the
// transport ended, or adds f before end runs, and end runs before the
// reader's own goroutine, the last one counted until then, returns.
func (t *stdioTransport) spawn(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended() {
		return
	}
	t.wg.Go(f)
}

// watch reads stdout while no call is in flight, until it ends.
func (t *stdioTransport) watch() {
	for {
		select {
		case <-t.wake:
		case <-t.life.Done():
			return
		}
		select {
		case <-t.role:
		case <-t.life.Done():
			return
		}
		ended := t.readWhile(t.idle)
		t.role <- struct{}{}
		if ended {
			return
		}
	}
}

// idle reports whether the watcher may read on: no call is in flight, or
// stdout cannot be interrupted (then only the watcher reads it). It
// clears the read deadline under mu, so that begin cannot interrupt in
// between.
func (t *stdioTransport) idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watching = t.calls == 0 || t.outFD == nil
	if t.watching && t.outFD != nil {
		_ = t.outFD.SetReadDeadline(time.Time{})
	}
	return t.watching
}

// dispatch handles one incoming line. An answer that does not decode,
// or whose id is not as its request's was sent, fails the request it
// answers (see misanswered) rather than leave it waiting.
func (t *stdioTransport) dispatch(line []byte) {
	var m rpcMessage
	err := json.Unmarshal(line, &m)
	if err != nil {
		// A message nested too deep is decoded without what is too deep,
		// rather than dropped, leaving its request waiting.
		if flat, cut := flatten(line); cut {
			line = flat
			err = json.Unmarshal(line, &m)
		}
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	awaits := func(id string) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, ok := t.pending[id]
		return ok
	}
	if err != nil || m.Method == "" && !awaits(string(m.ID)) {
		id, why := misanswered(line, awaits, "")
		switch {
		case id == "":
			t.logger.Debug("ignoring a line that is not a JSON-RPC message, or an answer to no request of ours", "err", err, "line", short.Clip(string(line), 200))
			return
		case why != "":
			m = rpcMessage{ID: json.RawMessage(id), Error: &mcpgo.JSONRPCErrorDetails{Code: errMisanswered, Message: why}}
		default:
			m.ID = json.RawMessage(id) // as sent: 1.0 for 1, say
		}
		hasID = true
	}
	switch {
	case m.Method != "" && !hasID:
		var n mcpgo.JSONRPCNotification
		if err := json.Unmarshal(line, &n); err != nil {
			t.logger.Debug("ignoring a malformed notification", "err", err)
			return
		}
		t.mu.Lock()
		h := t.onNotify
		t.mu.Unlock()
		if h != nil {
			h(n)
		}
	case m.Method != "":
		var req transport.JSONRPCRequest
		if err := json.Unmarshal(line, &req); err != nil {
			t.logger.Debug("ignoring a malformed request", "err", err)
			return
		}
		t.handle(req)
	case hasID:
		t.mu.Lock()
		ch, ok := t.pending[string(m.ID)]
		delete(t.pending, string(m.ID))
		t.mu.Unlock()
		if !ok {
			t.logger.Debug("ignoring an answer to no request of ours", "id", short.Clip(string(m.ID), 64))
			return
		}
		ch <- rpcReply{result: m.Result, err: m.Error}
	}
}

// maxServerRequests bounds the server's requests being answered at once,
// on any transport. Answers are made at once (a ping, a refusal of
// sampling or roots), so only a server that does not take them keeps
// them waiting: a stdio server that does not read its stdin, each on a
// goroutine blocked writing its answer, or a streamable-HTTP server that
// holds the POSTs that carry them (mcp-go gives each 30 s), each on a
// goroutine and a connection of its own. Past the bound its requests go
// unanswered, rather than gathering goroutines and connections without
// end.
const maxServerRequests = 64

// A requestBound holds a token per server request being answered, at most
// maxServerRequests.
type requestBound struct {
	tokens  chan struct{}
	logger  *slog.Logger
	flooded atomic.Bool // one went unanswered for want of a token
}

func newRequestBound(logger *slog.Logger) *requestBound {
	return &requestBound{tokens: make(chan struct{}, maxServerRequests), logger: logger}
}

// take takes a token, which release gives back, or reports that there is
// none (warning once a session that the server's requests go unanswered).
func (b *requestBound) take() bool {
	select {
	case b.tokens <- struct{}{}:
		return true
	default:
		if !b.flooded.Swap(true) {
			b.logger.Warn("the MCP server sends requests faster than it takes the answers; leaving those past the bound unanswered", "limit", maxServerRequests)
		}
		return false
	}
}

func (b *requestBound) release() { <-b.tokens }

// handle answers a request from the server with the client's handler, on a
// goroutine of its own, unless maxServerRequests are being answered.
func (t *stdioTransport) handle(req transport.JSONRPCRequest) {
	if !t.requests.take() {
		return
	}
	t.mu.Lock()
	h := t.onRequest
	t.mu.Unlock()
	t.spawn(func() {
		defer t.requests.release()
		var resp *transport.JSONRPCResponse
		if h == nil {
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcpgo.METHOD_NOT_FOUND, "no request handler", nil)
		} else {
			r, err := h(t.life, req)
			switch {
			case err != nil:
				resp = transport.NewJSONRPCErrorResponse(req.ID, mcpgo.INTERNAL_ERROR, err.Error(), nil)
			case r == nil:
				return
			default:
				resp = r
			}
		}
		msg, err := json.Marshal(resp)
		if err != nil {
			t.logger.Warn("could not encode an answer to the server", "method", req.Method, "err", err)
			return
		}
		if err := t.write(t.life, msg); err != nil {
			t.logger.Debug("could not answer the server", "method", req.Method, "err", err)
		}
	})
}

// startStdio sends a tools/call on the session's raw stdio path: the
// params are written around args as they are, with the _meta of the
// client's requests, known since the session listed its tools, and ctx's
// progress token and trace context (traceparent, tracestate), if any, so
// the server's spans continue the call's. Connector.awaitStdio reads the
// answer.
func (s *session) startStdio(ctx context.Context, tool string, args json.RawMessage) (*pendingCall, error) {
	var meta json.RawMessage
	if m := s.stdio.meta.Load(); m != nil {
		meta = *m
	}
	meta = withMeta(meta, "progressToken", tokenOf(ctx))
	if parent, state, ok := propagate.Outgoing(ctx); ok {
		meta = withMeta(withMeta(meta, propagate.Traceparent, parent), propagate.Tracestate, state)
	}
	name, err := json.Marshal(tool)
	if err != nil {
		return nil, fmt.Errorf("encode the tool name: %w", err)
	}
	params := make([]byte, 0, len(meta)+len(name)+len(args)+32)
	params = append(params, '{')
	if len(meta) > 0 {
		params = append(params, `"_meta":`...)
		params = append(params, meta...)
		params = append(params, ',')
	}
	params = append(params, `"name":`...)
	params = append(params, name...)
	params = append(params, `,"arguments":`...)
	params = append(params, args...)
	params = append(params, '}')
	return s.stdio.start(ctx, string(mcpgo.MethodToolsCall), params)
}

// needsInput reports whether a result asks the client for input
// (resultType input_required, protocol 2026-07-28).
func needsInput(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(mcpgo.ResultTypeInputRequired)) {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(result, &r) == nil && r.ResultType == string(mcpgo.ResultTypeInputRequired)
}
