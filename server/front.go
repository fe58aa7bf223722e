package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// The task front answers the requests of tasks.go in front of mcp-go: a
// JSON-RPC request is read before mcp-go sees it, and a request for a task
// method or a task-augmented codemode call is answered here, everything
// else passed on (on stdio, every other request on a goroutine of the
// front's: see request). On stdio the front reads the input lines (stdioFront)
// and writes on the same output as mcp-go, one whole message per write;
// on streamable HTTP the guard hands it each POST body (serveHTTP). A
// request's mcp-go session (for elicitation and notifications) is the one
// mcp-go registered under the request's session id (Server.clients). The
// legacy SSE transport answers its requests on the event stream, which
// only mcp-go writes: it offers no tasks, and neither does an in-process
// client; there mcp-go ignores params.task and runs the call as a plain
// one, as the specification asks of a server that does not declare tasks.

// rpcRequest is a JSON-RPC message as the server reads it before mcp-go
// (the guard and the task front), with the head of its params.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method mcp.MCPMethod   `json:"method"`
	Params json.RawMessage `json:"params"`
	head   struct {
		Name string          `json:"name"` // tools/call's tool
		Task json.RawMessage `json:"task"`
		Meta *mcp.Meta       `json:"_meta"`
	}
}

// rpcBody is a POST body or a stdio line. Its JSON-RPC messages are read
// when something first asks for them, and once: most requests need
// nothing read (a call on a live session without an issuer).
type rpcBody struct {
	raw  []byte
	read bool
	msg  *rpcRequest // its one message (its first JSON value); nil when it does not parse (mcp-go answers it with a parse error) or is a batch
	// batch: b is a JSON array (or looks like one), which mcp-go refuses
	// whole (a parse error), so its messages are not read: 4 MiB of
	// [{},{},…] decoded would take 1 GiB.
	batch bool
}

// message returns the message of b (nil: none, or a batch).
func (b *rpcBody) message() *rpcRequest {
	if b == nil {
		return nil
	}
	if !b.read {
		b.read = true
		var m rpcRequest
		if t := bytes.TrimSpace(b.raw); len(t) > 0 && t[0] == '[' {
			b.batch = true
		} else if json.Unmarshal(t, &m) == nil || json.NewDecoder(bytes.NewReader(t)).Decode(&m) == nil {
			// (What follows the first JSON value is no reason to leave it
			// unread: mcp-go's SSE transport reads that one and ignores it.)
			_ = json.Unmarshal(m.Params, &m.head) // params that do not decode: the methods say so
			b.msg = &m
		}
	}
	return b.msg
}

// answered reports whether mcp-go answers b with one response: a request
// (an id and a method) or a batch (refused), not a notification nor a
// response. A body that does not parse is answered on the HTTP response,
// if at all, and is not counted (a batch is, all the same: one counted
// too many only makes its own client wait).
func (b *rpcBody) answered() bool {
	c := b.message()
	if c == nil {
		return b.batch
	}
	return len(c.ID) > 0 && string(c.ID) != "null" && c.Method != ""
}

// frontRequest returns the request of b that the front answers, or nil:
// tasks/get and tasks/cancel; tasks/result and tasks/list (2025-11-25);
// tasks/update (2026-07-28); a tools/call of codemode with params.task
// (2025-11-25) or from a client that declares the tasks extension
// (2026-07-28).
func (b *rpcBody) frontRequest() *rpcRequest {
	if b == nil || !maySay(b.raw, "task") { // cheap: every request the front answers says it
		return nil
	}
	c := b.message()
	if c == nil || len(c.ID) == 0 || string(c.ID) == "null" {
		return nil // not one request: mcp-go answers what it is
	}
	switch c.Method {
	case mcp.MethodToolsCall:
		task := c.head.Task // 2025-11-25: params.task; 2026-07-28: the extension declared
		if c.head.Name == "codemode" && (c.modern() && c.declaresTasks() || !c.modern() && len(task) > 0 && string(task) != "null") {
			return c
		}
	case mcp.MethodTasksGet, mcp.MethodTasksCancel:
		return c
	case mcp.MethodTasksResult, mcp.MethodTasksList:
		if !c.modern() { // removed in 2026-07-28: mcp-go says so
			return c
		}
	case methodTasksUpdate:
		if c.modern() {
			return c
		}
	}
	return nil
}

// maySay reports whether JSON text raw may say word (lower-case ASCII
// letters) once decoded as encoding/json, and so mcp-go, decodes it: as
// such, in another case (a key matches its field in any case, ſ for s and
// the Kelvin sign for k among them), or spelt with escapes (t\u0061sk).
// It reads raw without parsing it, so that most requests go on to mcp-go
// unparsed; an escape of anything but a letter (\n, \u003e) is no
// reason to parse.
func maySay(raw []byte, word string) bool {
	if bytes.Contains(raw, []byte("ſ")) || bytes.Contains(raw, []byte("\u212a")) {
		return true
	}
	// Where raw has the word's first letter, in either case, or a backslash.
	for _, c := range []byte{word[0], word[0] - 'a' + 'A', '\\'} {
		for rest := raw; len(rest) > 0; rest = rest[1:] {
			i := bytes.IndexByte(rest, c)
			if i < 0 {
				break
			}
			rest = rest[i:]
			if c != '\\' && len(rest) >= len(word) && bytes.EqualFold(rest[:len(word)], []byte(word)) {
				return true
			}
			if c == '\\' && len(rest) >= 6 && rest[1] == 'u' && letterEscape(rest[2:6]) {
				return true
			}
		}
	}
	return false
}

// letterEscape reports whether the hex digits of a \u escape are those
// of a letter: an ASCII one, ſ or K.
func letterEscape(h []byte) bool {
	return h[0] == '0' && h[1] == '0' && '4' <= h[2] && h[2] <= '7' || bytes.EqualFold(h, []byte("017f")) || bytes.EqualFold(h, []byte("212a"))
}

// rpcError is a JSON-RPC error the front answers with.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// rpcResponse is a JSON-RPC response the front writes; ID is the
// request's, byte for byte.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// modern reports whether c declares protocol 2026-07-28 or later (in _meta).
func (c *rpcRequest) modern() bool {
	return mcp.IsModernProtocol(c.head.Meta.ProtocolVersion())
}

// declaresTasks reports whether a modern request declares the tasks
// extension among its client capabilities.
func (c *rpcRequest) declaresTasks() bool {
	caps := c.head.Meta.ClientCapabilities()
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// methodTasksUpdate answers a task's input requests (2026-07-28).
const methodTasksUpdate mcp.MCPMethod = "tasks/update"

// taskFront serves the task methods for one transport while it runs; the
// goroutines it starts (requests on stdio, status followers) end when its
// context does, and stop waits for them.
type taskFront struct {
	s       *Server
	ctx     context.Context // ends when the transport's does, or at stop
	cancel  context.CancelFunc
	mu      sync.Mutex // held by stop while it cancels, and by spawn
	wg      sync.WaitGroup
	partial partialAnswers
	// inflight holds the front's own requests in progress, by
	// requestKey, as a *context.CancelCauseFunc that ends one when its
	// client cancels it (track).
	inflight sync.Map
	// following holds a token per live follower: at most maxFollowers
	// goroutines, however many tasks the clients start.
	following chan struct{}
}

// newFront starts the front of a transport that serves until ctx ends,
// and declares tasks to the clients from then on.
func (s *Server) newFront(ctx context.Context) *taskFront {
	f := &taskFront{s: s, following: make(chan struct{}, maxFollowers)}
	f.ctx, f.cancel = context.WithCancel(ctx)
	s.tasksServed.Store(true)
	return f
}

// stop ends what the front started and waits for it.
func (f *taskFront) stop() {
	f.mu.Lock()
	f.cancel()
	f.mu.Unlock()
	f.wg.Wait()
}

// spawn runs g on a goroutine stop waits for, unless the front stopped,
// and reports whether it did. mcp-go's read goroutine (stdioFront.Read)
// can outlive Listen, hence stop: under mu, spawn sees the front stopped
// or adds g before stop's Wait begins.
func (f *taskFront) spawn(g func()) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		return false
	}
	f.wg.Go(g)
	return true
}

// answer answers one request, with ctx (which ends with the request) and
// sess, the request's mcp-go session (nil: none), and encodes the answer
// (one that does not encode is answered as an internal error).
func (f *taskFront) answer(ctx context.Context, sess mcpserver.ClientSession, c *rpcRequest) []byte {
	resp := rpcResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: c.ID}
	result, err := f.dispatch(ctx, sess, c)
	var re *rpcError
	switch {
	case err == nil:
		resp.Result = result
	case errors.As(err, &re):
		resp.Error = re
	case ctx.Err() != nil:
		resp.Error = &rpcError{Code: mcp.REQUEST_INTERRUPTED, Message: "the request ended before the task did: " + ctx.Err().Error()}
	default:
		f.s.log.Error("task request failed", "method", c.Method, "err", err)
		resp.Error = &rpcError{Code: mcp.INTERNAL_ERROR, Message: internalError(err)}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		f.s.log.Error("encoding a task response failed", "method", c.Method, "err", err)
		b, _ = json.Marshal(rpcResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: c.ID, Error: &rpcError{Code: mcp.INTERNAL_ERROR, Message: "internal error: the answer could not be encoded"}})
	}
	return b
}

// requestKey is a request of a session as notifications/cancelled names
// it: the session's id and the request's id, decoded and encoded again
// (so that 1 and 1.0 are one id, as mcp-go takes them).
type requestKey struct{ session, id string }

func keyOf(session string, id json.RawMessage) requestKey {
	var v any
	if json.Unmarshal(id, &v) == nil {
		id, _ = json.Marshal(v)
	}
	return requestKey{session, string(id)}
}

// errCancelledByClient ends a request its client cancelled.
var errCancelledByClient = errors.New("cancelled by the client (notifications/cancelled)")

// track returns ctx for the front's request id of session (""; none,
// whose requests are not tracked), ended when the client cancels it
// (cancelRequest), and the func to call once the request has its answer,
// which reports whether the client cancelled it: the answer is then not
// written, as the specification asks. A request whose id is already in
// progress in its session cannot be cancelled.
func (f *taskFront) track(ctx context.Context, session string, id json.RawMessage) (context.Context, func() (cancelled bool)) {
	ctx, cancel := context.WithCancelCause(ctx)
	untracked := func() bool { cancel(nil); return false }
	if session == "" {
		return ctx, untracked
	}
	key, entry := keyOf(session, id), &cancel
	if _, dup := f.inflight.LoadOrStore(key, entry); dup {
		return ctx, untracked
	}
	return ctx, func() bool {
		f.inflight.CompareAndDelete(key, entry)
		cancelled := context.Cause(ctx) == errCancelledByClient
		cancel(nil)
		return cancelled
	}
}

// cancelRequest ends the front's request in progress that c, a
// notifications/cancelled of session, names, if there is one.
func (f *taskFront) cancelRequest(session string, c *rpcRequest) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if session == "" || json.Unmarshal(c.Params, &p) != nil {
		return
	}
	if v, ok := f.inflight.LoadAndDelete(keyOf(session, p.RequestID)); ok {
		(*v.(*context.CancelCauseFunc))(errCancelledByClient)
	}
}

// cancellation returns b if it is a notifications/cancelled, or nil.
func (b *rpcBody) cancellation() *rpcRequest {
	if b == nil || !maySay(b.raw, "cancelled") {
		return nil
	}
	if c := b.message(); c != nil && c.Method == mcp.MethodNotificationCancelled && (len(c.ID) == 0 || string(c.ID) == "null") {
		return c
	}
	return nil
}

// taskParams are the params of the requests the front answers: the task
// methods' and a task-augmented codemode call's.
type taskParams struct {
	TaskID         string                     `json:"taskId"`
	Cursor         string                     `json:"cursor"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Arguments      json.RawMessage            `json:"arguments"`
	Task           struct {
		TTL *int64 `json:"ttl"` // nil: none asked for
	} `json:"task"`
}

func (f *taskFront) dispatch(ctx context.Context, sess mcpserver.ClientSession, c *rpcRequest) (any, error) {
	s := f.s
	if c.modern() && !c.declaresTasks() {
		return nil, &rpcError{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, Message: "Missing required client capability",
			Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}}
	}
	var p taskParams
	if len(c.Params) > 0 {
		if err := json.Unmarshal(c.Params, &p); err != nil {
			return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("invalid params of %s: %v", c.Method, err)}
		}
	}
	switch c.Method {
	case mcp.MethodToolsCall:
		return f.create(ctx, sess, c, p)
	case mcp.MethodTasksList:
		return f.list(ctx, p.Cursor)
	}
	if p.TaskID == "" {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("invalid params of %s: taskId is required", c.Method)}
	}
	switch c.Method {
	case mcp.MethodTasksGet:
		if c.modern() {
			return f.modernGet(ctx, p.TaskID)
		}
		_, _, t, err := s.view(ctx, p.TaskID, false)
		return t, err
	case mcp.MethodTasksResult:
		return f.result(ctx, sess, p.TaskID)
	case mcp.MethodTasksCancel:
		return f.cancelTask(ctx, p.TaskID, c.modern())
	case methodTasksUpdate:
		return f.update(ctx, p.TaskID, p.InputResponses)
	}
	return nil, &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: "Method " + string(c.Method) + " not found"}
}

// create starts a task-augmented codemode call's program and answers with
// its task (CreateTaskResult; 2026-07-28: the task with resultType task),
// once the run is in the store. The task is working as it is created, even
// when a quick program has already ended by the time the answer is
// written: tasks/get says so next.
func (f *taskFront) create(ctx context.Context, sess mcpserver.ClientSession, c *rpcRequest, p taskParams) (any, error) {
	modern := c.modern()
	ttl, o := defaultTaskTTL, codemode.Observer(nil)
	if !modern { // 2026-07-28: the default TTL, and no notifications
		ttl = taskTTL(p.Task.TTL)
		if sess != nil {
			o = f.s.observer(f.s.mcp.WithContext(f.ctx, sess), c.head.Meta)
		}
	}
	e, err := f.s.startTask(f.s.traced(ctx, c.head.Meta), p.Arguments, ttl, o)
	if err != nil {
		return nil, err
	}
	v := viewTask(e, nil, modern)
	v.Status, v.StatusMessage, v.LastUpdatedAt = mcp.TaskStatusWorking, "the program is running", v.CreatedAt
	if modern {
		t := modernTask(v)
		t["resultType"] = "task"
		return t, nil
	}
	if sess != nil {
		f.follow(sess, v)
	}
	return mcp.CreateTaskResult{Task: v, Result: mcp.Result{Meta: mcp.WithModelImmediateResponse(
		fmt.Sprintf("The program runs as task %s; its result comes when the task completes.", e.ID))}}, nil
}

// followPoll is how often a follower reads its task for a change another
// process made (this process's own changes wake it at once): status
// notifications are a courtesy, polling is how a client learns (the
// specification says as much), so a follower of a task that waits hours
// for a person reads it seldom.
const followPoll = 2 * time.Second

// maxFollowers bounds the followers of one front (a transport: every
// session of the HTTP one), each a goroutine for as long as its task
// lives, which may be days: past it a new task is not followed, and its
// client learns its status by polling, as it must anyway.
const maxFollowers = 1024

// follow sends the session notifications/tasks/status as task v's status
// changes, through whichever process changes it, until it ends or
// expires (its TTL is at most maxTaskTTL), the session goes (is no
// longer registered: seen at the next read, within followPoll) or the
// front stops. It reports whether it follows: not when maxFollowers
// already do. A client that does not read its notifications holds no
// follower up: mcp-go drops what its session's queue cannot take.
func (f *taskFront) follow(sess mcpserver.ClientSession, v mcp.Task) bool {
	select {
	case f.following <- struct{}{}:
	default:
		f.s.log.Debug("task not followed: too many followers", "task", v.TaskId, "max", maxFollowers)
		return false
	}
	if !f.spawn(func() {
		defer func() { <-f.following }()
		gone := func() bool {
			cur, ok := f.s.clients.Load(sess.SessionID())
			return !ok || cur != sess
		}
		last := v.Status
		for !last.IsTerminal() {
			_, err := f.s.rt.Await(f.ctx, v.TaskId, followPoll, func(e *codemode.Execution) bool {
				return viewTask(e, nil, false).Status != last || expired(e, time.Now()) || gone()
			})
			if err != nil || gone() {
				return
			}
			_, _, t, err := f.s.view(f.ctx, v.TaskId, false)
			if err != nil { // (an expired task too)
				return
			}
			last = t.Status
			err = f.s.mcp.SendNotificationToSpecificClient(sess.SessionID(), string(mcp.MethodNotificationTasksStatus), taskParamsMap(t))
			if errors.Is(err, mcpserver.ErrSessionNotFound) {
				return
			}
		}
	}) {
		<-f.following
		return false
	}
	return true
}

// taskParamsMap is a task as notification params.
func taskParamsMap(t mcp.Task) map[string]any {
	b, _ := json.Marshal(t)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// result answers tasks/result: the outcome a plain call gives, once the
// task ended, asking the person about its pauses meanwhile.
func (f *taskFront) result(ctx context.Context, sess mcpserver.ClientSession, id string) (any, error) {
	if _, err := f.s.taskRun(ctx, id); err != nil {
		return nil, err
	}
	if _, err := f.s.awaitResult(ctx, sess, id); err != nil {
		return nil, err
	}
	res, err := f.s.taskResult(ctx, id)
	if err != nil {
		return nil, err
	}
	res.Meta = mcp.WithRelatedTask(id)
	return res, nil
}

// list answers tasks/list: the tasks newest first, a page of
// taskListPage runs read from the store at a time (never the whole list).
// The cursor is the key of the last run of the page before
// (codemode.ExecutionFilter.After), so a task created between two pages
// (newer, listed before it) does not push one onto the next page to be
// listed twice. A task past its TTL is left out, so a page may hold
// fewer; nextCursor is set while the store has more.
func (f *taskFront) list(ctx context.Context, cursor string) (any, error) {
	after, err := parseTaskCursor(cursor)
	if err != nil {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "invalid cursor " + short.Quote(cursor) + ": " + err.Error()}
	}
	runs, err := f.s.rt.Executions(ctx, codemode.ExecutionFilter{Tasks: true, Limit: taskListPage + 1, After: after})
	if err != nil {
		return nil, err
	}
	res := mcp.ListTasksResult{Tasks: []mcp.Task{}}
	if len(runs) > taskListPage {
		runs = runs[:taskListPage]
		last := runs[len(runs)-1]
		res.NextCursor = mcp.Cursor(strconv.FormatInt(last.CreatedAt.UnixNano(), 10) + "." + last.ID)
	}
	now := time.Now()
	for _, e := range runs {
		if !expired(e, now) {
			res.Tasks = append(res.Tasks, viewTask(e, nil, false))
		}
	}
	return res, nil
}

// maxTaskCursor bounds a tasks/list cursor: a run's creation time in Unix
// nanoseconds (at most 20 characters), a dot and its id (the runtime's
// are 21).
const maxTaskCursor = 128

// parseTaskCursor reads the cursor list gives ("<unix nanos>.<run id>");
// "" is the first page. The client's bytes only ever reach the store as a
// bound value.
func parseTaskCursor(cursor string) (codemode.ExecutionKey, error) {
	if cursor == "" {
		return codemode.ExecutionKey{}, nil
	}
	if len(cursor) > maxTaskCursor {
		return codemode.ExecutionKey{}, fmt.Errorf("%d bytes, more than a cursor this server gives (%d)", len(cursor), maxTaskCursor)
	}
	at, id, ok := strings.Cut(cursor, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	// (PostgreSQL's text holds no NUL: such an id would fail the read.)
	if !ok || err != nil || id == "" || strings.ContainsFunc(id, unicode.IsControl) {
		return codemode.ExecutionKey{}, errors.New("not a cursor this server gave")
	}
	return codemode.ExecutionKey{CreatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

// cancelTask answers tasks/cancel: the task is cancelled before the
// answer (2025-11-25: with the task; 2026-07-28: an acknowledgement). A
// task that has ended is refused (invalid params) on 2025-11-25.
func (f *taskFront) cancelTask(ctx context.Context, id string, modern bool) (any, error) {
	e, err := f.s.taskRun(ctx, id)
	if err != nil {
		return nil, err
	}
	cancelled := false
	if !e.Status.Terminal() {
		_, err = f.s.rt.Cancel(ctx, id, "cancelled by the client (tasks/cancel)")
		if err != nil && !codemode.IsRefusal(err) {
			return nil, err
		}
		cancelled = err == nil // else the run ended first
	}
	if modern {
		return map[string]any{"resultType": "complete"}, nil
	}
	_, _, v, err := f.s.view(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if !cancelled {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", v.Status)}
	}
	return v, nil
}

// modernGet answers tasks/get on 2026-07-28: the task with its status's
// own field (the questions it waits on, its result).
func (f *taskFront) modernGet(ctx context.Context, id string) (any, error) {
	e, pending, v, err := f.s.view(ctx, id, true)
	if err != nil {
		return nil, err
	}
	t := modernTask(v)
	t["resultType"] = "complete"
	switch v.Status {
	case mcp.TaskStatusInputRequired:
		reqs := map[string]any{}
		if f.s.opts.Elicitation { // (as for elicitation: approvals.elicitation)
			for _, q := range questions(pending) {
				reqs[q.key] = map[string]any{"method": mcp.MethodElicitationCreate, "params": q.elicitation(id)}
			}
		}
		t["inputRequests"] = reqs
	case mcp.TaskStatusCompleted:
		res, err := f.s.taskResult(ctx, e.ID)
		if err != nil {
			return nil, err
		}
		t["result"] = res
	}
	return t, nil
}

// update answers tasks/update (2026-07-28): the answers to a paused task's
// questions; once every question is accepted the run is approved (in the
// background), a declined one rejects it. Answers to keys not asked now
// are ignored, as the extension asks.
func (f *taskFront) update(ctx context.Context, id string, responses map[string]json.RawMessage) (any, error) {
	ack := map[string]any{"resultType": "complete"}
	e, pending, _, err := f.s.view(ctx, id, true)
	if err != nil {
		return nil, err
	}
	if e.Status != codemode.StatusPaused || !f.s.opts.Elicitation { // nothing was asked: no answer counts
		f.partial.forget(id)
		return ack, nil
	}
	qs := questions(pending)
	answers := map[string]mcp.ElicitationResponseAction{}
	for _, q := range qs {
		raw, ok := responses[q.key]
		if !ok {
			continue
		}
		var r struct {
			Action mcp.ElicitationResponseAction `json:"action"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("invalid params of tasks/update: inputResponses[%q]: %v", q.key, err)}
		}
		answers[q.key] = r.Action
	}
	f.partial.merge(subjectOf(ctx), id, qs, answers)
	decided, err := f.s.decide(ctx, id, pending, qs, answers)
	if decided {
		f.partial.forget(id)
	}
	if err != nil {
		return nil, err
	}
	return ack, nil
}

// stdioFront is the reader mcp-go's stdio transport reads: it reads whole
// lines from in, answers the front's requests (each on its own goroutine,
// as tasks/result may wait long) and hands mcp-go every other line. A
// line is a message, bounded as an HTTP body is (server.max_body): a
// longer one is answered at once with an Invalid Request error without
// id (its id is not read) and skipped, so a client writing without a
// newline cannot fill the memory of the process, and its other requests
// go on.
type stdioFront struct {
	f   *taskFront
	in  *bufio.Reader
	out *stdioOut
	max int64 // the longest line handed on, its newline not counted
	// sess is the stdio session, set by the transport's context function
	// before the first Read.
	sess mcpserver.ClientSession
	rest []byte // what is left of the line being handed to mcp-go
}

// stdioSession is the session of the front's requests on stdio, which
// has one (track).
const stdioSession = "stdio"

func (r *stdioFront) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if err := r.f.ctx.Err(); err != nil {
			return 0, err // the session ended: nothing more is read
		}
		line, err := r.readLine()
		body := &rpcBody{raw: line}
		if c := body.frontRequest(); c != nil {
			ctx, done := r.f.track(r.f.ctx, stdioSession, c.ID)
			r.serve(func() []byte {
				if b := r.f.answer(ctx, r.sess, c); !done() {
					return b
				}
				return nil // cancelled: no answer
			})
		} else if c := request(body); c != nil {
			r.serve(func() []byte { return r.handle(c.ID, line) })
		} else {
			if c := body.cancellation(); c != nil {
				r.f.cancelRequest(stdioSession, c) // (mcp-go cancels its own requests)
			}
			r.rest = line
		}
		if err != nil {
			if len(r.rest) == 0 {
				return 0, err
			}
			break // the last line first; the next Read returns err again
		}
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// serve answers a request on a goroutine of the front's, counted as an
// answer waiting (owe) until its answer is written.
func (r *stdioFront) serve(answer func() []byte) {
	paid := r.out.owe()
	if !r.f.spawn(func() { // the answer, as one line
		if b := answer(); b != nil {
			r.write(b, paid)
		} else {
			paid()
		}
	}) {
		paid() // the front stopped: the next turn ends
	}
}

// request returns b's request (an id and a method; nil: none), which
// the front hands to mcp-go on a goroutine of its own (handle), counted
// from when it is read until its answer is written (maxWaitingAnswers),
// rather than through mcp-go's stdio read loop. That one serves a request
// on a goroutine nothing counts until the answer is written, however long
// it takes (subscriptions/listen waits for the session's end), and runs a
// tools/call itself once its 5 workers and queue of 100 are taken (with
// more than 105 codemode calls awaiting approval it could then no longer
// read the elicitation answers that approve them). b is parsed whole, as
// mcp-go parses it: a request spelt otherwise (escaped, in other cases)
// is one all the same. Notifications, responses and batches are left to
// mcp-go's read loop, which answers each before it reads the next line.
func request(b *rpcBody) *rpcRequest {
	if c := b.message(); c != nil && c.Method != "" && len(c.ID) > 0 && string(c.ID) != "null" {
		return c
	}
	return nil
}

// handle answers request line, whose id is id, through mcp-go, in the
// session, until the front stops; a handler's panic is answered as an
// internal error, as mcp-go's stdio read loop answers it.
func (r *stdioFront) handle(id json.RawMessage, line []byte) (b []byte) {
	defer func() {
		if p := recover(); p != nil {
			r.f.s.log.Error("a request's handler panicked", "panic", p)
			b, _ = json.Marshal(rpcResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: &rpcError{Code: mcp.INTERNAL_ERROR, Message: "internal error"}})
		}
	}()
	msg := r.f.s.mcp.HandleMessage(r.f.s.mcp.WithContext(r.f.ctx, r.sess), line)
	if msg == nil {
		return nil // (what mcp-go takes for a response: nothing to answer)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		r.f.s.log.Warn("an answer does not encode", "err", err)
		return nil
	}
	return b
}

// readLine reads the next line of at most r.max bytes (and its newline),
// refusing and skipping longer ones; err is in's, with what came before it.
func (r *stdioFront) readLine() ([]byte, error) {
	var line []byte
	skipping := false
	for {
		piece, err := r.in.ReadSlice('\n')
		if !skipping && int64(len(line)+len(bytes.TrimSuffix(piece, []byte("\n")))) > r.max {
			skipping, line = true, nil
			r.f.s.log.Warn("a client message over server.max_body refused (one line on stdin)", "limit_bytes", r.max)
			b, _ := json.Marshal(rpcResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: json.RawMessage("null"), Error: &rpcError{Code: mcp.INVALID_REQUEST,
				Message: fmt.Sprintf("Invalid Request: the message exceeds %d bytes (server.max_body) and was not read", r.max)}})
			r.write(b, r.out.owe())
		}
		if !skipping {
			line = append(line, piece...) // (a copy: piece is in's buffer)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
		case skipping && err == nil:
			skipping = false // the long line ended: the next one
		default:
			return line, err
		}
	}
}

// write queues one message as a line, counted by paid (owe).
func (r *stdioFront) write(msg []byte, paid func()) {
	if err := r.out.send(append(msg, '\n'), paid); err != nil {
		r.f.s.log.Debug("writing a response failed", "err", err)
	}
}

// maxWaitingAnswers bounds the answers a stdio client waits for, each
// held until the client has read it: a request's from when it is read
// (each has a goroutine until it is answered: see request), everything
// else written from when it is queued. A client that goes on writing
// requests while it reads none of the answers (or faster than they are
// made) would otherwise make the server hold one per request, without
// end. When one more would wait, the session ends (errNotReading): such a
// client is broken, and making its requests wait for a slot instead could
// keep out the answer to an approval the others wait on. It bounds the
// answers waiting on a legacy SSE event stream too (sseStream), where
// mcp-go answers every request on the stream and a POST past it is
// refused.
const maxWaitingAnswers = 1024

// maxWaitingBytes bounds the bytes of the messages waiting to be written
// on stdio, as maxWaitingAnswers bounds their number: an answer is cut to
// sandbox.max_result_chars, but shown twice (structured and as text), in
// UTF-8, so that one weighs up to some 190 KB at the default 24,000
// characters, and MiBs with a larger setting (a result and its logs are
// kept up to 1 MiB each): 1,024 of them would be 190 MB, or GiBs.
const maxWaitingBytes = 64 << 20

// errNotReading ends a stdio session whose client has too many answers
// waiting.
var errNotReading = fmt.Errorf("the client waits for more than %d answers or %d MiB of them: it reads none of them, or asks faster than they are answered (the session ends)", maxWaitingAnswers, maxWaitingBytes>>20)

// stdioOut is stdio's output. mcp-go and the front write whole messages,
// one per Write, which queues it and returns at once (mcp-go's handlers,
// one goroutine per request, never wait for the client to read); one
// goroutine (run) writes them in turn until the session ends (ctx), and
// then only the write in progress may be left waiting on the client,
// until it reads or closes its end, or the process exits. A notification
// is dropped while half of maxWaitingAnswers or of maxWaitingBytes wait,
// as mcp-go drops one its session's queue cannot take, so a program's
// progress alone never ends a session; past either bound the session ends
// with errNotReading.
type stdioOut struct {
	ctx     context.Context // the session's
	end     context.CancelCauseFunc
	queue   chan outMsg
	waiting atomic.Int64 // answers (owe)
	queued  atomic.Int64 // bytes queued, the message being written included
}

// outMsg is a message to write and the func that says it no longer waits.
type outMsg struct {
	p    []byte
	paid func()
}

func newStdioOut(ctx context.Context, end context.CancelCauseFunc, w io.Writer) *stdioOut {
	o := &stdioOut{ctx: ctx, end: end, queue: make(chan outMsg, maxWaitingAnswers+1)} // (and flush's)
	go o.run(w)
	return o
}

// run writes the messages queued until the session ends.
func (o *stdioOut) run(w io.Writer) {
	for {
		select {
		case m := <-o.queue:
			if len(m.p) > 0 {
				_, _ = w.Write(m.p) // (a client gone: its input ends too)
			}
			o.queued.Add(-int64(len(m.p)))
			m.paid()
		case <-o.ctx.Done():
			return
		}
	}
}

// flush returns once what is queued is written, or the session ends.
func (o *stdioOut) flush() {
	written := make(chan struct{})
	if o.send(nil, func() { close(written) }) == nil {
		select {
		case <-written:
		case <-o.ctx.Done():
		}
	}
}

// owe counts an answer waiting until the func it returns is called; past
// maxWaitingAnswers it ends the session.
func (o *stdioOut) owe() (paid func()) {
	if o.waiting.Add(1) > maxWaitingAnswers {
		o.end(errNotReading)
	}
	return func() { o.waiting.Add(-1) }
}

// Write queues a message of mcp-go's.
func (o *stdioOut) Write(p []byte) (int, error) {
	if isNotification(p) && (o.waiting.Load() >= maxWaitingAnswers/2 || o.queued.Load()+int64(len(p)) > maxWaitingBytes/2) {
		return len(p), nil // dropped
	}
	if err := o.send(p, o.owe()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// send queues a copy of p, counted by paid, unless the session ended or
// ends now, past maxWaitingBytes (or maxWaitingAnswers: the queue is full).
func (o *stdioOut) send(p []byte, paid func()) error {
	if o.ctx.Err() == nil {
		if o.queued.Add(int64(len(p))) <= maxWaitingBytes {
			select {
			case o.queue <- outMsg{p: bytes.Clone(p), paid: paid}:
				return nil
			default:
			}
		}
		o.end(errNotReading)
	}
	paid()
	return context.Cause(o.ctx)
}

// serveHTTP answers a streamable-HTTP POST whose body is a request of the
// front, with a JSON response, and reports whether it did. A request
// whose Mcp-Protocol-Version header and body disagree on whether they
// speak 2026-07-28 is mcp-go's to refuse: the session rules let a modern
// header through without a session (sessions.check), so a body of an
// earlier protocol must not then be served on the session it names. A
// notifications/cancelled of a session ends the front's request of that
// session it names (track), which is then answered with an empty stream.
func (f *taskFront) serveHTTP(w http.ResponseWriter, r *http.Request, body *rpcBody) bool {
	modern, session := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)), ""
	if !modern { // the session the guard checked (2026-07-28 has none)
		session = r.Header.Get(mcpserver.HeaderKeySessionID)
	}
	c := body.frontRequest()
	if c == nil {
		if n := body.cancellation(); n != nil {
			f.cancelRequest(session, n) // (and mcp-go its own)
		}
		return false
	}
	if c.modern() != modern {
		return false
	}
	var sess mcpserver.ClientSession // the request's, registered by mcp-go under its id
	if v, ok := f.s.clients.Load(session); ok {
		sess = v.(mcpserver.ClientSession)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(f.ctx, cancel)
	defer stop()
	ctx, done := f.track(ctx, session, c.ID)
	b := f.answer(ctx, sess, c)
	if done() { // cancelled: a stream without an answer, as the transport allows
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return true
}
