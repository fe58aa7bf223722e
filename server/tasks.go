package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/evict"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// Long runs as tasks.
//
// A task is a run. A task-augmented tools/call of the codemode tool (MCP
// 2025-11-25: params.task; 2026-07-28: a client that declares the
// io.modelcontextprotocol/tasks extension) starts the program with
// Engine.Start and answers at once with the run's id as the task's id; the
// run goes on in the background. Everything a task shows — its status, its
// result, what it waits for — is read from the store, so every process
// sharing the store answers for it, after a restart too; nothing about a
// task lives in this process's memory but the notifications it sends.
//
// The run's status is the task's, as README "Long runs as tasks" tabulates
// it (viewTask).
//
// tasks/result (2025-11-25) gives the outcome a plain call gives, and,
// while the task waits for a person, asks them through the client
// (elicitation, on the session that called tasks/result), showing each
// pending action as the codemode call's own elicitation does, and approves
// only what was shown, whole (Engine.Resume with the digest of the actions
// shown). On 2026-07-28, tasks/get lists the same questions as
// inputRequests and tasks/update answers them.
//
// mcp-go keeps the tasks it serves in its process's memory, so the server
// answers the task methods itself, in front of mcp-go, on the transports
// that let it (front.go): stdio and streamable HTTP.

// Task hints and bounds.
const (
	// taskPollInterval is the pollInterval hint sent with every task.
	taskPollInterval = time.Second
	// defaultTaskTTL is a task's TTL when the client asks for none;
	// requested TTLs are kept within [minTaskTTL, maxTaskTTL].
	defaultTaskTTL = 24 * time.Hour
	minTaskTTL     = time.Minute
	maxTaskTTL     = 7 * 24 * time.Hour
	// taskListPage is how many tasks one tasks/list answer holds.
	taskListPage = 50
	// maxStatusMessage bounds the pending actions a task's status message
	// shows (characters).
	maxStatusMessage = 1000
)

// tasksExtension is the 2026-07-28 extension's identifier.
const tasksExtension = "io.modelcontextprotocol/tasks"

// always is an Await condition that holds at once: a read of the run.
func always(*codemode.Execution) bool { return true }

// taskRun reads the run of task id. An unknown id, a run that is not a
// task and a task past its TTL name no task: invalid params, as the
// specification asks.
func (s *Server) taskRun(ctx context.Context, id string) (*codemode.Execution, error) {
	e, err := s.rt.Await(ctx, id, 0, always)
	if err != nil && !errors.Is(err, codemode.ErrUnknownExecution) {
		return nil, err
	}
	switch {
	case err != nil || e.Task == nil:
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "Failed to retrieve task: task not found"}
	case expired(e, time.Now()):
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "Failed to retrieve task: task has expired"}
	}
	return e, nil
}

// expired reports whether e's task is past its TTL at now.
func expired(e *codemode.Execution, now time.Time) bool {
	return e.Task.TTL > 0 && now.After(e.CreatedAt.Add(e.Task.TTL))
}

// taskTTL resolves the TTL a client asked for (milliseconds; nil: none).
func taskTTL(ms *int64) time.Duration {
	switch {
	case ms == nil:
		return defaultTaskTTL
	case *ms > maxTaskTTL.Milliseconds(): // (before it could overflow)
		return maxTaskTTL
	}
	return max(time.Duration(*ms)*time.Millisecond, minTaskTTL)
}

// viewTask maps a run to its task as 2025-11-25 shows it;
// modern selects the 2026-07-28 mapping, where a run that ended with an
// outcome is completed.
func viewTask(e *codemode.Execution, pending []codemode.PendingAction, modern bool) mcp.Task {
	poll := taskPollInterval.Milliseconds()
	t := mcp.Task{TaskId: e.ID, StatusMessage: e.Error, PollInterval: &poll,
		CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339), LastUpdatedAt: e.UpdatedAt.UTC().Format(time.RFC3339)}
	if e.Task.TTL > 0 {
		ttl := e.Task.TTL.Milliseconds()
		t.TTL = &ttl
	}
	switch e.Status {
	case codemode.StatusRunning:
		t.Status, t.StatusMessage = mcp.TaskStatusWorking, "the program is running"
	case codemode.StatusWaiting:
		t.Status, t.StatusMessage = mcp.TaskStatusWorking, "the program waits for the tasks of downstream servers"
	case codemode.StatusPaused:
		t.Status, t.StatusMessage = mcp.TaskStatusInputRequired, pendingMessage(pending)
	case codemode.StatusCompleted:
		t.Status, t.StatusMessage = mcp.TaskStatusCompleted, ""
	case codemode.StatusCancelled:
		t.Status = mcp.TaskStatusCancelled
	default: // error, rejected, rolling_back, rolled_back
		t.Status = mcp.TaskStatusFailed
		if modern {
			t.Status = mcp.TaskStatusCompleted
		}
		t.StatusMessage = cmp.Or(t.StatusMessage, "the run is "+e.Status.String())
	}
	t.StatusMessage = short.FirstLine(t.StatusMessage)
	return t
}

// modernTask is a task as the 2026-07-28 extension shows it (the fields
// common to every status; tasks/get adds the status's own).
func modernTask(t mcp.Task) map[string]any {
	m := map[string]any{"taskId": t.TaskId, "status": t.Status, "createdAt": t.CreatedAt, "lastUpdatedAt": t.LastUpdatedAt,
		"ttlMs": t.TTL, "pollIntervalMs": *t.PollInterval}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	return m
}

// pendingMessage says what a paused run waits for: each pending action,
// its arguments cut to fit.
func pendingMessage(pending []codemode.PendingAction) string {
	if len(pending) == 0 {
		return "the run waits for a person"
	}
	parts := make([]string, len(pending))
	for i, p := range pending {
		if p.Awaits == codemode.AwaitsSignIn {
			parts[i] = fmt.Sprintf("call %d (%s) awaits a sign-in to %s", p.Seq, shownMethod(p), p.Connector)
			continue
		}
		parts[i] = fmt.Sprintf("call %d awaits approval: %s(%s)", p.Seq, shownMethod(p), visible.Escape(string(p.Args)))
	}
	return short.Clip(strings.Join(parts, "; "), maxStatusMessage)
}

// view reads task id and its pending actions (when it waits).
func (s *Server) view(ctx context.Context, id string, modern bool) (*codemode.Execution, []codemode.PendingAction, mcp.Task, error) {
	e, err := s.taskRun(ctx, id)
	if err != nil {
		return nil, nil, mcp.Task{}, err
	}
	var pending []codemode.PendingAction
	if e.Status == codemode.StatusPaused {
		if pending, err = s.rt.Pending(ctx, id); err != nil {
			return nil, nil, mcp.Task{}, err
		}
	}
	return e, pending, viewTask(e, pending, modern), nil
}

// taskResult is the tool result a finished task gives: what a plain
// codemode call gives for its outcome.
func (s *Server) taskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	out, err := s.rt.Outcome(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.outcomeResult(out), nil
}

// startTask starts a codemode call's program as a task with the observer
// o (nil: none); a bad request is an rpcError (invalid params), as is a
// program refused before anything was stored (too large, type errors).
func (s *Server) startTask(ctx context.Context, args json.RawMessage, ttl time.Duration, o codemode.Observer) (*codemode.Execution, error) {
	in, err := codemodeArgs.decode("codemode", args)
	if err != nil {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	if o != nil {
		ctx = codemode.WithObserver(ctx, o)
	}
	out, err := s.rt.Start(ctx, in.Code, codemode.Task{TTL: ttl})
	if err != nil {
		return nil, err // (logged by answer)
	}
	if out.Status != codemode.StatusRunning {
		return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "the program was refused; nothing was run: " + out.Error}
	}
	return s.rt.Await(ctx, out.ExecutionID, 0, always)
}

// questions are what a person is asked about a paused task through the
// client: one elicitation per pending action awaiting approval, keyed
// uniquely over the task's life (the call, and a hash of what it shows).
type question struct {
	key    string
	action codemode.PendingAction
	msg    string
	whole  bool // the message shows the arguments whole: accepting it approves them
}

func questions(pending []codemode.PendingAction) []question {
	var out []question
	for _, p := range pending {
		if p.Awaits != codemode.AwaitsApproval {
			continue
		}
		msg, whole := elicitMessage(p)
		sum := sha256.Sum256([]byte(msg))
		out = append(out, question{key: fmt.Sprintf("approve-%d-%s", p.Seq, hex.EncodeToString(sum[:6])), action: p, msg: msg, whole: whole})
	}
	return out
}

// elicitation is the elicitation/create request of a question, tied to
// its task.
func (q question) elicitation(taskID string) mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Meta:            mcp.WithRelatedTask(taskID),
		Mode:            mcp.ElicitationModeForm,
		Message:         q.msg,
		RequestedSchema: noFields,
	}
}

// decide applies a person's answers about a paused task: every question
// accepted, each showing its arguments whole, approves every pending action
// shown (the digest of pending refuses the approval if the run moved on);
// a declined or cancelled one rejects the run; anything else leaves it
// waiting. It reports whether it decided.
func (s *Server) decide(ctx context.Context, id string, pending []codemode.PendingAction, qs []question, answers map[string]mcp.ElicitationResponseAction) (bool, error) {
	if len(qs) == 0 || len(qs) != len(pending) {
		return false, nil // a sign-in is awaited too: answered elsewhere (askSignIn)
	}
	rv := codemode.Review{Digest: codemode.PendingDigest(pending)}
	accepted := 0
	for _, q := range qs {
		switch answers[q.key] {
		case mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
			rv.Reason = fmt.Sprintf("call %d (%s.%s) was declined through the client", q.action.Seq, q.action.Connector, q.action.Method)
			_, err := s.rt.RejectReviewed(ctx, id, 0, rv)
			return err == nil, refusalOK(err)
		case mcp.ElicitationResponseActionAccept:
			if q.whole {
				accepted++
			}
		}
	}
	if accepted < len(qs) {
		return false, nil
	}
	_, err := s.rt.Resume(ctx, id, rv)
	return err == nil, refusalOK(err)
}

// refusalOK drops a refusal (the run moved on meanwhile, or cannot be
// approved yet): the task shows what it is now.
func refusalOK(err error) error {
	if codemode.IsRefusal(err) {
		return nil
	}
	return err
}

// awaitResult waits, for tasks/result, until task id ends, and asks the
// person about each pause it meets on the way through the session's
// client (once per pause), when it can (see askPaused).
func (s *Server) awaitResult(ctx context.Context, sess mcpserver.ClientSession, id string) (*codemode.Execution, error) {
	var asked time.Time // the pause already put to the person
	for {
		e, err := s.rt.Await(ctx, id, 0, func(e *codemode.Execution) bool {
			return e.Status.Terminal() || (e.Status == codemode.StatusPaused && !e.UpdatedAt.Equal(asked))
		})
		if err != nil {
			return nil, err
		}
		if e.Status.Terminal() {
			return e, nil
		}
		asked = e.UpdatedAt
		if err := s.askPaused(ctx, sess, e); err != nil {
			return nil, err
		}
	}
}

// askPaused puts a paused task's pending actions to the person through
// the session's client: approvals by elicitation, a sign-in by URL-mode
// elicitation (as the codemode call does), when elicitation is enabled
// and the client declared it. A question it cannot ask leaves the run
// waiting for a decision made elsewhere (the console, the command line);
// such a decision also ends a question still open (whilePaused). One
// request of this process asks about a pause at a time: another
// tasks/result for the task (a client's second, or one retried after its
// first timed out) waits for that one to be done, and asks only if the
// run is still in the same pause then (the question went unanswered).
func (s *Server) askPaused(ctx context.Context, sess mcpserver.ClientSession, e *codemode.Execution) error {
	id := e.ID
	pending, err := s.rt.Pending(ctx, id)
	if err != nil || len(pending) == 0 {
		return refusalOK(err)
	}
	if sess == nil || !s.opts.Elicitation {
		return nil
	}
	qctx, stop := s.whilePaused(ctx, id, e.UpdatedAt)
	defer stop()
	mine := &asking{done: make(chan struct{})}
	for {
		v, busy := s.asking.LoadOrStore(id, mine)
		if !busy {
			break
		}
		select {
		case <-v.(*asking).done:
			if v.(*asking).answered {
				return nil // the person answered about this pause
			}
		case <-qctx.Done():
			return ctx.Err() // (nil: the pause ended)
		}
	}
	defer func() {
		s.asking.Delete(id)
		close(mine.done)
	}()
	// The pause may have ended since it was read (decided through another
	// request's question, or elsewhere), before qctx says so.
	if cur, err := s.taskRun(ctx, id); err != nil || cur.Status != codemode.StatusPaused || !cur.UpdatedAt.Equal(e.UpdatedAt) {
		return refusalOK(err)
	}
	sctx := s.mcp.WithContext(qctx, sess)
	if len(pending) == 1 && pending[0].Awaits == codemode.AwaitsSignIn {
		if s.askSignIn(sctx, pending[0]) {
			_, err := s.rt.Resume(ctx, id, codemode.Review{Digest: codemode.PendingDigest(pending)})
			return refusalOK(err)
		}
		return nil
	}
	if s.approver(sctx) == nil {
		return nil
	}
	qs := questions(pending)
	answers := map[string]mcp.ElicitationResponseAction{}
	for _, q := range qs {
		res, err := s.mcp.RequestElicitation(sctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params:  q.elicitation(id),
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if qctx.Err() == nil {
				s.log.Info("elicitation unavailable; the task stays input_required", "executionId", id, "err", err)
			}
			return nil
		}
		answers[q.key], mine.answered = res.Action, true
		if res.Action != mcp.ElicitationResponseActionAccept {
			break
		}
	}
	_, err = s.decide(ctx, id, pending, qs, answers)
	return err
}

// asking is one request's asking the person about a task's pause
// (askPaused): done is closed once it is over, answered set before if the
// person answered.
type asking struct {
	done     chan struct{}
	answered bool
}

// whilePaused returns a context that ends with ctx, or once run id is no
// longer in the pause that began at since (it was decided elsewhere), and
// the func that ends it and waits for the watcher it starts.
func (s *Server) whilePaused(ctx context.Context, id string, since time.Time) (context.Context, func()) {
	qctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := s.rt.Await(qctx, id, 0, func(e *codemode.Execution) bool {
			return e.Status != codemode.StatusPaused || !e.UpdatedAt.Equal(since)
		})
		if err == nil {
			cancel()
		}
	})
	return qctx, func() {
		cancel()
		wg.Wait()
	}
}

// partialAnswers remembers, for the 2026-07-28 form, the questions of a
// paused task accepted so far by tasks/update (a client may answer them
// one at a time), by task id then key. It is this process's only memory
// of a task: a client that answers the rest through another replica
// answers them all again. It is bounded as sessions are: past
// maxPersonPartial tasks of one person, that person's least recently
// answered is forgotten, then past maxSessions, anyone's, so that one
// person answering in a loop makes only their own approvals be asked
// again. Safe for concurrent use.
type partialAnswers struct {
	mu       sync.Mutex
	accepted map[string]*partial
	seq      int64 // the last partial.used
}

// partial is what is remembered of one task: whose answers they are,
// when they were last given (an order, not a time) and the keys accepted.
type partial struct {
	subject string
	used    int64
	keys    map[string]bool
}

// maxPersonPartial bounds the tasks one person has answered in part and
// are remembered (a person waits on a few at once).
const maxPersonPartial = 256

// merge adds to answers, the answers to the current questions of task id
// (answered by subject: "" without an issuer), those accepted before and
// not answered now, and remembers every one accepted; the others are
// forgotten (a question not current any more was of a pause that is over).
func (p *partialAnswers) merge(subject, id string, current []question, answers map[string]mcp.ElicitationResponseAction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.accepted == nil {
		p.accepted = map[string]*partial{}
	}
	var before map[string]bool
	if e := p.accepted[id]; e != nil {
		before = e.keys
		delete(p.accepted, id) // made room for again below, as its subject's
	}
	now := map[string]bool{}
	for _, q := range current {
		if _, ok := answers[q.key]; !ok && before[q.key] {
			answers[q.key] = mcp.ElicitationResponseActionAccept
		}
		if answers[q.key] == mcp.ElicitationResponseActionAccept {
			now[q.key] = true
		}
	}
	used := func(e *partial) time.Time { return time.Unix(0, e.used) } // evict's order
	if subject != "" {
		evict.MakeRoomAmong(p.accepted, maxPersonPartial, func(e *partial) bool { return e.subject == subject }, used)
	}
	evict.MakeRoom(p.accepted, maxSessions, nil, used)
	p.seq++
	p.accepted[id] = &partial{subject: subject, used: p.seq, keys: now}
}

// forget drops what was remembered of task id.
func (p *partialAnswers) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.accepted, id)
}
