package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/rawpipe"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// sseResponseTimeout replaces the SSE transport's 60 s response limit: the
// caller's context and CallTimeout are what bound a call.
const sseResponseTimeout = 100 * 365 * 24 * time.Hour

// newTransport builds the transport of a new session, its requests going
// through tap; for a stdio server it starts the child process.
func (c *Connector) newTransport(s *session) (transport.Interface, error) {
	cfg := &c.cfg
	if cfg.Command != "" {
		p, err := startProcess(cfg, c.logger, func() { s.cancel(errExited) })
		if err != nil {
			return nil, err
		}
		s.proc = p
		// Reading the server's answers polls for a while (rawpipe.Spin): a
		// local server's answer then finds this process running.
		s.stdio = newStdioTransport(rawpipe.Wrap(p.stdout, rawpipe.Spin), rawpipe.Wrap(p.stdin, 0), c.logger)
		return s.stdio, nil
	}
	var rt http.RoundTripper = c.httpTransport
	if cfg.OAuth != nil {
		rt = cfg.OAuth.Transport(rt)
	}
	bodies := boundedBodies{RoundTripper: refusedCredentials{rt, cfg.Scrubber}, scrub: cfg.Scrubber}
	if cfg.SSE {
		bodies.book = &answerBook{}
	}
	hc := &http.Client{Transport: bodies, CheckRedirect: checkRedirect}
	if cfg.SSE {
		tr, err := transport.NewSSE(cfg.URL,
			transport.WithHeaders(cfg.Headers),
			transport.WithHTTPClient(hc),
			transport.WithSSELogger(c.logger),
			transport.WithResponseTimeout(sseResponseTimeout),
		)
		if err != nil {
			return nil, fmt.Errorf("sse url %q: %w", scrub.URL(cfg.URL), err)
		}
		return sseTap{SSE: tr, logger: c.logger, book: bodies.book}, nil
	}
	opts := []transport.StreamableHTTPCOption{
		transport.WithHTTPHeaders(cfg.Headers),
		transport.WithHTTPBasicClient(hc),
		transport.WithHTTPLogger(c.logger),
	}
	if cfg.Elicit != nil {
		// A server sends requests not tied to a call (an elicitation) on
		// the session's GET stream: a client that answers them listens.
		opts = append(opts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", scrub.URL(cfg.URL), err)
	}
	return streamTap{StreamableHTTP: tr, logger: c.logger, requests: newRequestBound(c.logger)}, nil
}

// tap sends req with send, a transport's own SendRequest, so that the
// connector sees the raw JSON result of its own requests: mcp-go decodes
// tool definitions into typed schemas (losing top-level keywords such as
// anyOf or description) and rejects a whole result over one unknown
// content type; the connector decodes the raw bytes itself instead. A
// request opts in by carrying a rawSink in its context, whose raw result
// it records. For a sink that keeps the result to itself (rawSink.keep),
// mcp-go gets an empty tools/call result instead of the real one, so it
// does not decode a typed copy the connector never reads.
func tap(ctx context.Context, req transport.JSONRPCRequest, logger *slog.Logger,
	send func(context.Context, transport.JSONRPCRequest) (*transport.JSONRPCResponse, error),
) (*transport.JSONRPCResponse, error) {
	resp, err := send(ctx, req)
	if req.Method == string(mcpgo.MethodServerDiscover) && err == nil && resp != nil && resp.Error == nil && !namesVersions(resp.Result) {
		// A server that answers every method it does not know with an
		// empty result is not a 2026-07-28 server: mcp-go would take it
		// for one and never send initialize. An error makes it fall back
		// to the handshake.
		logger.Debug("server/discover was answered without supportedVersions; using the initialize handshake")
		r := *resp
		r.Result = nil
		r.Error = &mcpgo.JSONRPCErrorDetails{Code: mcpgo.METHOD_NOT_FOUND, Message: "server/discover answered without supportedVersions"}
		return &r, nil
	}
	if sink, ok := ctx.Value(sinkKey{}).(*rawSink); ok {
		if stub := sink.record(resp, err); stub != nil {
			r := *resp
			r.Result = stub
			return &r, err
		}
	}
	return resp, err
}

// The results mcp-go decodes in place of those a rawSink hides: a
// tools/call result it keeps, a tools/list result its admit refused.
var (
	emptyCallResult = json.RawMessage(`{"content":[]}`)
	emptyToolList   = json.RawMessage(`{"tools":[]}`)
)

// sseTap and streamTap are mcp-go's HTTP transports whose requests go
// through tap; every other method, the optional ones mcp-go's client
// looks for included, is the transport's own.
type sseTap struct {
	*transport.SSE
	logger *slog.Logger
	book   *answerBook // the requests awaiting their answers on the stream
}

func (t sseTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	id := idText(req.ID)
	t.book.add(id)
	resp, err := tap(ctx, req, t.logger, t.SSE.SendRequest)
	t.book.done(id)
	return resp, err
}

type streamTap struct {
	*transport.StreamableHTTP
	logger   *slog.Logger
	requests *requestBound
}

// SendRequest tells boundedBodies, through the context, the id of the
// request the POST's answer is for.
func (t streamTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return tap(context.WithValue(ctx, answerKey{}, idText(req.ID)), req, t.logger, t.StreamableHTTP.SendRequest)
}

// answerKey is the context key of the id (its JSON text) of the request a
// streamable-HTTP POST carries.
type answerKey struct{}

// SetRequestHandler bounds the server's requests being answered at once
// (maxServerRequests), as over stdio: mcp-go answers each (a ping, a
// refusal of sampling) on a goroutine of its own, posting the answer with
// the context it gives h, which it ends once the answer is posted or 30 s
// have passed; a token is held until then. A request past the bound is
// left unanswered (h's nil answer is not sent). (mcp-go's SSE transport
// answers no request of the server's.)
func (t streamTap) SetRequestHandler(h transport.RequestHandler) {
	t.StreamableHTTP.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if !t.requests.take() {
			return nil, nil
		}
		context.AfterFunc(ctx, t.requests.release)
		return h(ctx, req)
	})
}

type sinkKey struct{}

// A rawSink holds the raw result of the last request sent with its context:
// nil when that request failed or was answered with a JSON-RPC error.
type rawSink struct {
	// keep hides a tools/call result from mcp-go (which then sees an empty
	// result) unless it asks the client for input, which mcp-go handles.
	// Fixed at creation.
	keep bool
	// admit, when set, vets a tools/list result before mcp-go decodes it
	// (see toolBudget.take); one it refuses is hidden from mcp-go, which
	// sees an empty list, and its reason is the sink's refusal. Fixed at
	// creation.
	admit func(json.RawMessage) error

	mu      sync.Mutex
	raw     json.RawMessage
	refused error
}

func withSink(ctx context.Context, s *rawSink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

// record keeps the raw result of resp, if any, and returns what mcp-go
// gets in its place, or nil for the result itself: an empty list when
// admit refuses it (the result is then dropped), an empty call result
// when keep hides it, unless it mentions input_required (a
// multi-round-trip result, whose requests mcp-go fulfils; the test is by
// text, so a result merely containing the word is decoded by mcp-go too,
// which is only slower).
func (s *rawSink) record(resp *transport.JSONRPCResponse, err error) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw, s.refused = nil, nil
	if err != nil || resp == nil || resp.Error != nil || len(resp.Result) == 0 {
		return nil
	}
	switch {
	case s.admit != nil:
		if s.refused = s.admit(resp.Result); s.refused != nil {
			return emptyToolList
		}
	case s.keep && !bytes.Contains(resp.Result, []byte("input_required")):
		s.raw = resp.Result
		return emptyCallResult
	}
	s.raw = resp.Result
	return nil
}

// refusal is why admit refused the last result, or nil.
func (s *rawSink) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *rawSink) result() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw
}

// namesVersions reports whether a server/discover result lists the
// protocol versions the server supports, as a 2026-07-28 server's does.
func namesVersions(result json.RawMessage) bool {
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	return json.Unmarshal(result, &r) == nil && len(r.SupportedVersions) > 0
}

// boundedBodies bounds each message a remote server sends to maxMessage, as
// readLine does a stdio server's: mcp-go reads an answer or an event whole,
// so without it a server writing without end would be gathered without
// end. A JSON answer is one message; an event stream's messages are its
// events, each ended by an empty line, so a session's long-lived stream
// may carry any number of them. Past the bound the body's read fails
// (errTooLarge), which fails the request or ends the stream.
//
// It also flattens each message (flatten), as readLine does: mcp-go
// decodes a message with encoding/json, which refuses one nested deeper
// than maxDepth whole, so one tool that deep failed its whole tools/list
// page, a call result that deep failed its call as a transport failure
// (retiring the session), and over an event stream (legacy SSE, or a
// streamable-HTTP answer as events) the message was dropped, its request
// left waiting for an answer that never came. Flattened, the message is
// decoded, and the value too deep is what decodeToolPage leaves out and
// decodeCallResult refuses, naming it.
//
// And it replaces an answer mcp-go would drop, or take for a failure of
// the session, by an error answer of its request (see answers.go): the
// answer of a streamable-HTTP POST is its request's, a JSON answer over
// the bound included; the legacy SSE stream carries the answers of all
// the requests in book.
type boundedBodies struct {
	http.RoundTripper
	book  *answerBook // legacy SSE only
	scrub *scrub.Scrubber
}

// RoundTrip bounds the answer's body: an event stream event by event
// (eventBody); a JSON answer read whole here and flattened; any other,
// read as it comes (boundedBody).
func (b boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.RoundTripper.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	var fix func([]byte) []byte // see fixEvent
	id, _ := req.Context().Value(answerKey{}).(string)
	switch {
	case id != "":
		// mcp-go takes any id of a streamable-HTTP POST's answer for its
		// request's.
		fix = func(msg []byte) []byte {
			if _, why := misanswered(msg, func(string) bool { return true }, id); why != "" {
				return errorAnswer(id, why)
			}
			return nil
		}
	case b.book != nil:
		fix = b.book.fix
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case resp.StatusCode >= 400:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(b.errorWords(body)))
	case strings.HasPrefix(ct, "text/event-stream"):
		body := &eventBody{ReadCloser: resp.Body, fix: fix}
		if id != "" {
			body.over = fmt.Appendf(nil, "data: %s\n\n", errorAnswer(id, errTooLarge.Error()))
		}
		resp.Body = body
	case strings.HasPrefix(ct, "application/json"):
		body, err := io.ReadAll(&boundedBody{ReadCloser: resp.Body})
		_ = resp.Body.Close()
		switch {
		case errors.Is(err, errTooLarge) && id != "":
			body = errorAnswer(id, errTooLarge.Error())
		case err != nil:
			return nil, err
		default:
			body, _ = flatten(body)
			if id == "" {
				break // not a POST's answer mcp-go reads (legacy SSE), or not a request's
			}
			if fixed := fix(body); fixed != nil {
				body = fixed
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	default:
		resp.Body = &boundedBody{ReadCloser: resp.Body}
	}
	return resp, nil
}

// maxErrorBody bounds what is read of an error answer's body (a status of
// 400 or more): mcp-go decodes it as a JSON-RPC error, or else puts it
// whole into its error message, which is logged and shown to the program.
// maxErrorWords bounds what it gets of one that is not JSON (see
// errorWords).
const (
	maxErrorBody  = 64 << 10
	maxErrorWords = 1 << 10
)

// errorWords is an error answer's body as mcp-go gets it: scrubbed of the
// secrets the connector knows (a server may echo the request's
// credentials) and, unless it is JSON, which mcp-go decodes as a JSON-RPC
// error, clipped to maxErrorWords.
func (b boundedBodies) errorWords(body []byte) string {
	words := b.scrub.String(string(body))
	if json.Valid([]byte(words)) {
		return words
	}
	return short.Clip(words, maxErrorWords)
}

// errTooLarge is why a remote server's message was not read.
var errTooLarge = fmt.Errorf("the server sent a message of more than %d MiB", maxMessage>>20)

// boundedBody is a body read as one message of at most maxMessage bytes.
type boundedBody struct {
	io.ReadCloser
	n int // bytes read
}

// Read hands on nothing of the read that crosses the bound, so a decoder
// cannot complete a value with it; from then on every read fails.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.n > maxMessage {
		return 0, errTooLarge
	}
	n, err := b.ReadCloser.Read(p)
	if b.n += n; b.n > maxMessage {
		return 0, errTooLarge
	}
	return n, err
}

// eventBody is an event stream handed on event by event: an event (its
// lines up to the empty line that ends it) is gathered, at most maxMessage
// bytes of it, flattened (flattenEvent) and, when fix is set, fixed
// (fixEvent) before it is read. Gathering delays nothing: mcp-go acts on
// an event once it has ended. An event the stream ends inside is handed
// on as it is.
type eventBody struct {
	io.ReadCloser
	fix func([]byte) []byte // see fixEvent; fixed at creation
	// over, when set, is the event handed on in place of one over the
	// bound, before the stream ends (with errTooLarge).
	over []byte
	out  []byte // ended events, to be read
	in   []byte // the event being gathered
	line int    // in[line:] is its line not yet ended
	seen int    // in[:seen] has been looked at for line ends
	err  error  // what ended the stream (or errTooLarge)
}

func (b *eventBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		end := b.eventEnd()
		switch {
		case end > maxMessage, end < 0 && len(b.in) > maxMessage:
			b.in, b.line, b.seen, b.err = nil, 0, 0, errTooLarge
			if b.over == nil {
				return 0, errTooLarge
			}
			b.out, b.over = b.over, nil
		case end >= 0:
			b.out, b.in, b.line, b.seen = flattenEvent(b.in[:end]), b.in[end:], 0, 0
			if b.fix != nil {
				b.out = fixEvent(b.out, b.fix)
			}
		case b.err != nil && len(b.in) == 0:
			return 0, b.err
		case b.err != nil:
			b.out, b.in, b.line, b.seen = b.in, nil, 0, 0
		default:
			b.in = slices.Grow(b.in, max(32<<10, len(b.in)))
			n, err := b.ReadCloser.Read(b.in[len(b.in):cap(b.in)])
			b.in, b.err = b.in[:len(b.in)+n], err
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// eventEnd returns the length of the event gathered, up to and with the
// empty line (\n, \r\n) that ends it, or -1 when it has not ended yet.
func (b *eventBody) eventEnd() int {
	for {
		i := bytes.IndexByte(b.in[b.seen:], '\n')
		if i < 0 {
			b.seen = len(b.in)
			return -1
		}
		end := b.seen + i + 1
		b.seen = end
		if len(bytes.TrimRight(b.in[b.line:end], "\r\n")) == 0 {
			return end
		}
		b.line = end
	}
}

// flattenEvent returns ev, an event ended by an empty line, with its data
// flattened when it is nested deeper than maxDepth: its data lines,
// joined with line breaks as a reader of the stream joins them, are
// flattened and written back as data lines (whose breaks, outside JSON
// strings, are spaces to JSON) after its other lines.
func flattenEvent(ev []byte) []byte {
	if shallow(ev) {
		return ev
	}
	fields, data := splitEvent(ev)
	flat, cut := flatten(data)
	if !cut {
		return ev
	}
	return joinEvent(fields, flat)
}

// fixEvent returns ev, an event ended by an empty line, with its data
// replaced by what fix returns for it (see boundedBodies), if anything,
// when it is a message as mcp-go reads one: no event type, or "message".
func fixEvent(ev []byte, fix func([]byte) []byte) []byte {
	fields, data := splitEvent(ev)
	for _, f := range fields {
		if kind, ok := bytes.CutPrefix(bytes.TrimRight(f, "\r\n"), []byte("event:")); ok && string(bytes.TrimSpace(kind)) != "message" {
			return ev
		}
	}
	if len(data) == 0 {
		return ev
	}
	if fixed := fix(data); fixed != nil {
		return joinEvent(fields, fixed)
	}
	return ev
}

// splitEvent returns the lines of ev, an event ended by an empty line,
// that are not data lines, and its data lines' values joined with line
// breaks, as a reader of the stream joins them.
func splitEvent(ev []byte) (fields [][]byte, data []byte) {
	var values [][]byte
	for line := range bytes.Lines(ev) {
		if value, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			values = append(values, bytes.TrimPrefix(value, []byte(" ")))
		} else {
			fields = append(fields, line)
		}
	}
	return fields, bytes.Join(values, []byte("\n"))
}

// joinEvent is the event of splitEvent's fields with data written as
// data lines after them (whose breaks, outside JSON strings, are spaces
// to JSON).
func joinEvent(fields [][]byte, data []byte) []byte {
	empty := fields[len(fields)-1] // the line that ends the event
	out := bytes.Join(fields[:len(fields)-1], nil)
	for piece := range bytes.SplitSeq(data, []byte("\n")) {
		out = append(append(append(out, "data: "...), piece...), '\n')
	}
	return append(out, empty...)
}

// errCredentialsRefused is wrapped by the error of a request whose
// configured Authorization header the server refused.
var errCredentialsRefused = errors.New("the server refused the configured credentials (the Authorization header)")

// errForbidden is wrapped by the error of a request the server refused
// (403 Forbidden) although it carried the configured Authorization
// header: the credentials lack a permission (a scope) it wants, for that
// request or for any.
var errForbidden = fmt.Errorf("%w: 403 Forbidden", errCredentialsRefused)

// refusedCredentials fails a request that carried an Authorization header
// (the connector's headers: an OAuth session's token is set below it, on
// a copy) and was answered 401 or 403, with an error saying so and what
// the server said of why (oauth.Refusal, scrubbed): mcp-go would say only
// "authorization required" for a 401, and for a 403 to initialize that
// the server is likely a legacy SSE one.
type refusedCredentials struct {
	http.RoundTripper
	scrub *scrub.Scrubber
}

func (t refusedCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden || req.Header.Get("Authorization") == "" {
		return resp, err
	}
	said := oauth.Refusal(resp.Header.Values("WWW-Authenticate"))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if said != "" {
		said = ": " + t.scrub.String(said)
	}
	if resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("%w%s; give them the permission (scope) the server asks for, or configure credentials that have it", errForbidden, said)
	}
	return nil, fmt.Errorf("%w: 401 Unauthorized%s", errCredentialsRefused, said)
}
