package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// stopKind is why the host stopped a pass.
type stopKind int

const (
	stopPause    stopKind = iota + 1 // a call awaits approval
	stopReject                       // a call was declined or had been rejected
	stopDiverge                      // the program no longer matches its log
	stopInternal                     // the store failed
	stopQuota                        // the run's log would pass its quota (quota.go)
	// stopWait: a call runs as a task of its downstream server; the run
	// waits for it without a pass (waiting.go). Any other stop replaces
	// it: a pause lets a person answer while the task works, and a run
	// that ends settles the calls still waiting.
	stopWait
)

type stopReason struct {
	kind stopKind
	msg  string
	err  error // stopInternal: the failure
}

// pass is the sandbox.Host of one pass of one execution. Every call made by
// the program is answered from the log (replay), by calling the connector
// (execute) or by stopping the program (pause, refusal, divergence).
//
// Methods are called concurrently (Promise.all); mu serialises the decisions,
// not the connector calls.
type pass struct {
	// fixed at creation
	r   *Runtime
	cat *catalog.Catalog // the runtime's catalog when the pass began
	ap  codemode.Approver
	// reverts is, for a rollback's revert pass, the seq of the call it
	// undoes (Entry.Reverts): such a pass makes every call directly (the
	// person asked for the rollback) and logs it after seqBase. 0 for a
	// program's pass, which replays the log and gates what needs approval.
	reverts int
	seqBase int
	entries map[int]codemode.Entry // the log when the pass began
	// run is the run's id and starter: the policy asks about it (mayAsk),
	// and its calls carry its starter's credentials
	// (connectors.CallHook.User), never those of the person who resumed
	// or rolls back the run.
	run *codemode.Execution
	// userToken is the starter's access token when the pass runs on
	// their own request (connectors.CallHook.UserToken), else "".
	userToken string

	mu      sync.Mutex
	visited map[int]bool    // seqs the program reached; guarded by mu
	used    map[string]bool // connectors the program called; guarded by mu
	// open are the entries the pass would leave undecided if it ended
	// now: executing (their result not written yet), logged pending or
	// sign_in and still awaiting a person, or waiting for their
	// downstream task; guarded by mu.
	open map[int]codemode.Entry
	// Grouped log writes (see deferred.go); all guarded by mu.
	queued     []codemode.Entry       // new entries not written yet, in the order queued
	queuedAt   map[int]int            // seq -> index in queued
	deferred   []codemode.EntryUpdate // updates of written entries, not written yet
	groupStart time.Time              // when the oldest item of queued and deferred was queued
	groupBytes int                    // bytes of values queued since groupStart
	flushed    bool                   // the final flush ran: results are written at once
	ahead      map[int]bool           // seqs written ahead to the journal
	journaled  bool                   // the pass journaled something (dropped at finish)
	logBytes   int64                  // bytes of values in the run's log, with what the pass added (quota.go)

	askMu sync.Mutex // one approver question at a time (see gateLocked)

	snippetRuns atomic.Int32 // codemode.run calls answered (maxSnippetRuns)

	stop     *stopReason    // first stop; guarded by mu
	done     bool           // the pass is over; guarded by mu
	maxSeq   int            // highest seq reached; guarded by mu
	inflight sync.WaitGroup // calls in progress; Add under mu while !done && stop == nil
}

var _ sandbox.Host = (*pass)(nil)

func newPass(r *Runtime, run *codemode.Execution, ap codemode.Approver, reverts, seqBase int, log []codemode.Entry) *pass {
	p := &pass{
		r:        r,
		cat:      r.catalog(),
		run:      run,
		ap:       ap,
		reverts:  reverts,
		seqBase:  seqBase,
		entries:  make(map[int]codemode.Entry, len(log)),
		visited:  map[int]bool{},
		used:     map[string]bool{},
		open:     map[int]codemode.Entry{},
		ahead:    map[int]bool{},
		queuedAt: map[int]int{},
		maxSeq:   seqBase,
	}
	for _, e := range log {
		p.entries[e.Seq] = e
		p.logBytes += int64(len(e.Args) + len(e.Name) + len(e.Result) + len(e.Error)) // its values, against the quota
	}
	return p
}

// enter registers a call unless the pass is stopped or over (the refusal,
// wrapping sandbox.ErrStop); p.inflight.Done must follow a success.
func (p *pass) enter() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refusalLocked(); err != nil {
		return err
	}
	p.inflight.Add(1)
	return nil
}

// refusalLocked returns the error refusing further calls, or nil.
func (p *pass) refusalLocked() error {
	switch {
	case p.stop != nil:
		return fmt.Errorf("%w: %s", sandbox.ErrStop, p.stop.msg)
	case p.done:
		return fmt.Errorf("%w: the pass is over", sandbox.ErrStop)
	}
	return nil
}

// stopLocked records the first stop reason (a wait gives way to any
// other: see stopWait) and returns the error that stops the program.
func (p *pass) stopLocked(kind stopKind, msg string, err error) error {
	if p.stop == nil || (p.stop.kind == stopWait && kind != stopWait) {
		p.stop = &stopReason{kind: kind, msg: msg, err: err}
	}
	return fmt.Errorf("%w: %s", sandbox.ErrStop, p.stop.msg)
}

// reach marks a seq as reached by the program.
func (p *pass) reachLocked(seq int) {
	p.visited[seq] = true
	p.maxSeq = max(p.maxSeq, seq)
}

// finish ends the pass: later calls are refused, calls still in flight
// are waited for, and what is queued is written, with also when the pass
// was not stopped (a revert pass marks the call it undid reverted with
// its last results). It returns the stop, if any, and the error of that
// final write, an internal failure of the pass; the run's status is
// recorded only after it.
func (p *pass) finish(ctx context.Context, also ...codemode.EntryUpdate) (*stopReason, error) {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	p.inflight.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if len(also) > 0 && p.stop == nil {
		if err = p.writeLocked(ctx, also, nil); err != nil {
			err = fmt.Errorf("record the end of a pass of %s: %w", p.run.ID, err)
		}
	} else {
		err = p.flushLocked(ctx)
	}
	p.flushed = true
	if err == nil {
		p.dropJournalLocked(ctx)
	}
	return p.stop, err
}

// dropJournalLocked removes the pass's journal, if any, once all it holds
// is written, before the run's status changes.
func (p *pass) dropJournalLocked(ctx context.Context) {
	if !p.journaled {
		return
	}
	if err := p.r.journal.DropJournal(context.WithoutCancel(ctx), p.run.ID); err != nil {
		p.r.log.WarnContext(ctx, "could not remove a pass's journal", "execution", p.run.ID, "err", err)
		return
	}
	p.journaled = false
}

// Call performs or replays one connector call, in a span of its own when
// tracing is on (trace.go).
func (p *pass) Call(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.inflight.Done()
	if p.r.tracer == nil {
		return p.call(ctx, c, nil)
	}
	ctx, cs := p.startCall(ctx, c)
	val, err := p.call(ctx, c, cs)
	cs.end(val, err)
	return val, err
}

// call is Call once the call is entered; cs (nil: tracing is off) hears
// what was decided.
func (p *pass) call(ctx context.Context, c sandbox.Call, cs *callSpan) (json.RawMessage, error) {
	t, err := p.cat.Resolve(c.Connector, c.Method)
	if err != nil {
		return nil, err // thrown into the program; nothing is logged
	}
	args, decoded, err := jsonref.Canonical(c.Args)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: arguments are not valid JSON: %w", c.Connector, c.Method, err)
	}
	run, val, err := p.decide(ctx, c, t, args, decoded)
	if run == nil {
		cs.decided(p, p.seqBase+c.Seq, err)
		return val, err
	}
	cs.executing(p, *run)
	progress := observeCall(ctx, *run)
	if run.State == codemode.EntryWaiting {
		return p.readTask(ctx, *run, t)
	}
	return p.execute(ctx, *run, t, run.State == 0, progress)
}

// decide answers a call from the log, or decides to make it (returning
// its entry, logged executing), pause or refuse; decoded is args decoded,
// for validation.
func (p *pass) decide(ctx context.Context, c sandbox.Call, t *catalog.Method, args json.RawMessage, decoded any) (*codemode.Entry, json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refusalLocked(); err != nil {
		return nil, nil, err
	}
	seq := p.seqBase + c.Seq
	want := codemode.Entry{ExecutionID: p.run.ID, Seq: seq, Kind: codemode.KindCall, Connector: c.Connector, Method: c.Method, Args: args, Reverts: p.reverts}
	if logged, ok, err := p.loggedLocked(want); ok || err != nil {
		if err != nil {
			return nil, nil, err
		}
		p.used[c.Connector] = true
		return p.replayLocked(logged)
	}
	// A new call: its arguments are validated before anything is logged or
	// asked, so a bad call records nothing. (Its entry is made here, not
	// above: it escapes, and a replay should not pay for it.)
	e := want
	if msg := p.r.callArgsTooLarge(c.Connector, c.Method, args); msg != "" {
		return nil, nil, errors.New(msg)
	}
	var v catalog.Verdict
	switch {
	case t.SignIn == nil:
		// (A stand-in's schema and verdict wait for the sign-in:
		// Runtime.afterSignIn.)
		if err := schemacheck.Validate(t.InputSchema(), "arguments for "+c.Connector+"."+c.Method, decoded); err != nil {
			return nil, nil, err
		}
		var err error
		if v, err = t.Approval(args); err != nil {
			// The connector refuses the call (a generic call that reaches
			// what the configuration excluded).
			return nil, nil, fmt.Errorf("%s.%s: %w", c.Connector, c.Method, err)
		}
	case p.reverts != 0:
		return nil, nil, t.SignIn // a rollback's revert cannot wait for a person
	}
	if _, err := p.chargeLocked(len(args), func() (string, string) { return "the arguments of " + entryRef(e), "the call was not made" }); err != nil {
		return nil, nil, err
	}
	p.reachLocked(seq)
	p.used[c.Connector] = true
	if t.SignIn != nil {
		e.Error = t.SignIn.Error()
		if err := p.commitLocked(ctx, &e, 0, codemode.EntrySignIn); err != nil {
			return nil, nil, err
		}
		p.open[e.Seq] = e
		return nil, nil, p.stopLocked(stopPause, awaitsSignIn(e), nil)
	}
	if p.reverts == 0 && v.Why != catalog.NoApproval {
		return p.gateLocked(ctx, e)
	}
	if !t.Def.KnownReadOnly() || t.Tasker() != nil {
		// Write-ahead: a call that may have a side effect is journaled or
		// committed executing before it is sent (see deferred.go); so is
		// one its source runs as a task, whose id is then committed
		// (waiting.go).
		if err := p.queueBeforeLocked(ctx, &e, true); err != nil {
			return nil, nil, err
		}
	}
	return &e, nil, nil // a read-only call is queued once sent (execute)
}

// loggedLocked returns the log's entry at want's seq, marked reached,
// when the pass replays one there (ok false: want is new). An entry that is
// not want stops the pass (the replay diverged); not reached, it stays
// undecided, and the ending run settles it (an approved call does not
// stay executing).
func (p *pass) loggedLocked(want codemode.Entry) (logged codemode.Entry, ok bool, err error) {
	if logged, ok = p.entries[want.Seq]; !ok || p.reverts != 0 {
		return logged, false, nil
	}
	if logged.Kind != want.Kind || logged.Connector != want.Connector || logged.Method != want.Method || logged.Name != want.Name ||
		(want.Kind != codemode.KindStep && !sameArgs(logged.Args, want.Args)) {
		return logged, false, p.stopLocked(stopDiverge, fmt.Sprintf("replay diverged at call %d: the log has %s but the program now calls %s; wrap non-deterministic code in codemode.step",
			logged.Seq, describeEntry(logged), describeEntry(want)), nil)
	}
	p.reachLocked(want.Seq)
	return logged, true, nil
}

// replayLocked answers a call, step or service call from its entry in the
// log: its value or failure, a stop, or the entry to run.
func (p *pass) replayLocked(logged codemode.Entry) (*codemode.Entry, json.RawMessage, error) {
	switch logged.State {
	case codemode.EntryApplied:
		return nil, rawOrNull(logged.Result), nil
	case codemode.EntryError:
		return nil, nil, callError(logged)
	case codemode.EntryExecuting, codemode.EntryWaiting:
		// Executing: approved, or the pass that began it ended (a crash)
		// before its outcome was recorded: it runs (again), and its
		// outcome is recorded over that entry; at-least-once for that
		// window only. Waiting: its downstream task was started: it is
		// read (waiting.go), never called again.
		p.open[logged.Seq] = logged
		return &logged, nil, nil
	case codemode.EntryPending:
		return nil, nil, p.stopLocked(stopPause, entryRef(logged)+" awaits approval", nil)
	case codemode.EntrySignIn:
		return nil, nil, p.stopLocked(stopPause, awaitsSignIn(logged), nil)
	case codemode.EntryRejected:
		return nil, nil, p.stopLocked(stopReject, entryRef(logged)+" was rejected", nil)
	}
	return nil, nil, p.stopLocked(stopDiverge, fmt.Sprintf("%s is %s in the log and cannot run again", entryRef(logged), logged.State), nil)
}

// gateLocked logs a call needing approval pending and asks the approver,
// if any: accept executes it in this pass, decline rejects the run, no
// answer pauses it. It releases mu while the person answers (the pass's
// other calls go on, and it may stop); an answer that comes after the
// pass stopped or the call was cancelled is not applied, and the call
// stays pending. One question of a pass at a time (askMu).
func (p *pass) gateLocked(ctx context.Context, e codemode.Entry) (*codemode.Entry, json.RawMessage, error) {
	if err := p.commitLocked(ctx, &e, 0, codemode.EntryPending); err != nil {
		return nil, nil, err
	}
	what := entryRef(e) + " awaits approval"
	action := codemode.PendingAction{ExecutionID: e.ExecutionID, Seq: e.Seq, Connector: e.Connector, Method: e.Method, Args: e.Args}
	if p.ap == nil || !p.mayAsk(ctx, action) {
		return nil, nil, p.stopLocked(stopPause, what, nil)
	}
	p.open[e.Seq] = e
	p.mu.Unlock()
	dec := p.ask(ctx, action)
	p.mu.Lock()
	err := p.refusalLocked()
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("%s.%s: %w", e.Connector, e.Method, ctx.Err())
	}
	if err != nil {
		if dec != codemode.NoAnswer {
			p.r.log.InfoContext(ctx, "an approver's answer came after the pass stopped or the call was cancelled; the call stays pending", "execution", e.ExecutionID, "seq", e.Seq)
		}
		if p.stop != nil && p.stop.kind == stopWait {
			// A call's task started while the person was asked: the
			// pending call pauses the run (a pause wins over a wait).
			return nil, nil, p.stopLocked(stopPause, what, nil)
		}
		return nil, nil, err
	}
	if dec != codemode.NoAnswer {
		p.r.decided(ctx, &e)
		rec := codemode.AuditRecord{Action: codemode.AuditApprove, ExecutionID: e.ExecutionID, Seq: e.Seq, Target: e.Connector + "." + e.Method}
		if dec == codemode.Decline {
			rec.Action = codemode.AuditReject
		}
		p.r.audit(ctx, rec, nil)
	}
	switch dec {
	case codemode.Accept:
		if err := p.commitLocked(ctx, &e, codemode.EntryPending, codemode.EntryExecuting); err != nil {
			return nil, nil, err
		}
		p.open[e.Seq] = e
		return &e, nil, nil
	case codemode.Decline:
		if err := p.commitLocked(ctx, &e, codemode.EntryPending, codemode.EntryRejected); err != nil {
			return nil, nil, err
		}
		delete(p.open, e.Seq)
		return nil, nil, p.stopLocked(stopReject, "the user declined "+entryRef(e), nil)
	default:
		return nil, nil, p.stopLocked(stopPause, what, nil)
	}
}

// mayAsk reports whether the person whose request runs the pass may be
// asked to approve a (policy.MayApprove: under approvals.separation, not
// the run's starter); otherwise the run pauses for someone who may.
func (p *pass) mayAsk(ctx context.Context, a codemode.PendingAction) bool {
	who := codemode.PrincipalFrom(ctx)
	if who == nil {
		return true
	}
	return p.r.opts.Policy.MayApprove(who, p.run, []codemode.PendingAction{a}) == nil
}

// ask puts a pending action to the approver, one question of the pass at
// a time; an approver that cannot ask is no answer. It is called without
// mu.
func (p *pass) ask(ctx context.Context, a codemode.PendingAction) codemode.Decision {
	p.askMu.Lock()
	defer p.askMu.Unlock()
	var asked time.Time
	if p.r.tracer != nil {
		asked = time.Now()
	}
	dec, err := p.ap.Ask(ctx, a)
	if p.r.tracer != nil {
		noteAsk(ctx, time.Since(asked), dec)
	}
	if err != nil {
		p.r.log.InfoContext(ctx, "approver could not ask; pausing", "execution", a.ExecutionID, "seq", a.Seq, "err", err)
		return codemode.NoAnswer
	}
	return dec
}

// execute makes a decided call and queues its outcome (deferred.go: the
// program gets it without waiting for a commit). A new read-only call
// (fresh) is queued once sent. A group of log writes that came due is
// written while the call is in flight, once its connector reports the
// request sent (its CallHook, the one path by which a connector reports
// to the runtime), else once Call returned: never between a write-ahead
// and the sending. If that write fails, the outcome is dropped and the
// pass stops. progress, if not nil, hears the connector's progress.
func (p *pass) execute(ctx context.Context, e codemode.Entry, t *catalog.Method, fresh bool, progress func(string)) (json.RawMessage, error) {
	var (
		logged bool  // logInFlight ran (Sent, or after Call)
		logErr error // what its write gave
	)
	logInFlight := func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if logged {
			return
		}
		logged = true
		if fresh {
			logErr = p.queueLocked(&e)
		}
		if logErr == nil {
			logErr = p.writeGroupLocked(ctx, false)
		}
	}
	if tk := t.Tasker(); tk != nil && p.reverts == 0 {
		// (A rollback's revert cannot wait: it calls the tool plainly.)
		return p.startTask(ctx, e, t, tk)
	}
	hook := &connectors.CallHook{OnSent: logInFlight, OnProgress: progress, User: p.run.StartedBy.Subject, UserToken: p.userToken}
	var start time.Time
	if p.r.opts.Metrics != nil {
		start = time.Now()
	}
	res, callErr := t.Conn.Source.Connector.Call(connectors.WithCallHook(ctx, hook), t.Def.SourceName, e.Args)
	if p.r.opts.Metrics != nil {
		outcome := "ok"
		if callErr != nil || res.IsError {
			outcome = "error"
		}
		p.r.opts.Metrics.CallDone(ctx, e.Connector, e.Method, outcome, time.Since(start))
	}
	logInFlight() // if Sent was not reported
	if logErr != nil {
		return nil, logErr
	}
	return p.settle(ctx, e, res, callErr)
}

// settle records the outcome of a call logged executing (deferred, see
// deferred.go) and returns what the program gets.
func (p *pass) settle(ctx context.Context, e codemode.Entry, res connectors.Result, callErr error) (json.RawMessage, error) {
	res, callErr = p.r.scrubAnswer(res, callErr)
	sir, signIn := connectors.AsSignInRequired(callErr)
	switch {
	case callErr != nil && ctx.Err() != nil:
		// The pass was cancelled or timed out during the call: whether it
		// took effect is unknown, so the entry stays executing and the call
		// runs again on replay.
		return nil, fmt.Errorf("%s.%s: %w", e.Connector, e.Method, callErr)
	case signIn && p.reverts == 0:
		// The server refused the call for want of a (new) sign-in: it did
		// not take effect. The run pauses until a person signs in.
		e.Error = short.Clip(sir.Error(), p.r.maxValue)
		if err := p.record(ctx, e, codemode.EntrySignIn); err != nil {
			return nil, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		e.State = codemode.EntrySignIn
		p.open[e.Seq] = e
		return nil, p.stopLocked(stopPause, awaitsSignIn(e), nil)
	case callErr != nil:
		return p.answerFailure(ctx, e, fmt.Sprintf("%s.%s failed: %v", e.Connector, e.Method, callErr))
	case res.IsError:
		e.Error = short.Clip(res.Message, p.r.maxValue)
		if e.Error == "" {
			e.Error = fmt.Sprintf("%s.%s failed without a message", e.Connector, e.Method)
		}
		// The failure's details (a JSON object, such as an HTTP answer's
		// status and body) are kept as the entry's result, within the
		// per-value cap, so that replay throws the same Error.
		if len(res.Value) > 0 && len(res.Value) <= p.r.maxValue {
			e.Result = res.Value
		}
		return p.answer(ctx, e, codemode.EntryError, callError(e))
	}
	return p.answerValue(ctx, e, res.Value)
}

// answer records the outcome of e, an entry that was executing or
// waiting, and returns what the program gets: e's value, or thrown, its
// failure.
func (p *pass) answer(ctx context.Context, e codemode.Entry, to codemode.EntryState, thrown error) (json.RawMessage, error) {
	if err := p.record(ctx, e, to); err != nil {
		return nil, err
	}
	if thrown != nil {
		return nil, thrown
	}
	return e.Result, nil
}

// answerValue records val as the result of e, a call or step that ran,
// and returns it. A value over the per-value cap cannot be kept for
// replay: e fails saying so, and fails the same way on replay.
func (p *pass) answerValue(ctx context.Context, e codemode.Entry, val json.RawMessage) (json.RawMessage, error) {
	if msg := p.r.valueTooLarge(e, val); msg != "" {
		e.Error = msg
		return p.answer(ctx, e, codemode.EntryError, errors.New(msg))
	}
	e.Result = rawOrNull(val)
	return p.answer(ctx, e, codemode.EntryApplied, nil)
}

// answerFailure records msg as the failure of e, a call that ran, and
// throws it.
func (p *pass) answerFailure(ctx context.Context, e codemode.Entry, msg string) (json.RawMessage, error) {
	e.Error = short.Clip(msg, p.r.maxValue)
	return p.answer(ctx, e, codemode.EntryError, errors.New(e.Error))
}

// StepResult replays a recorded step, or logs it executing so it runs now.
func (p *pass) StepResult(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
	if err := p.enter(); err != nil {
		return nil, false, err
	}
	defer p.inflight.Done()
	run, val, err := p.decideLocal(ctx, codemode.Entry{ExecutionID: p.run.ID, Seq: p.seqBase + s.Seq, Kind: codemode.KindStep, Connector: "codemode", Method: "step", Name: s.Name, Reverts: p.reverts})
	return val, run == nil && err == nil, err
}

// decideLocal answers a step or a service call (want), which the host
// runs itself, from the log, or logs it executing (queued) and returns
// its entry: the caller runs it.
func (p *pass) decideLocal(ctx context.Context, want codemode.Entry) (*codemode.Entry, json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refusalLocked(); err != nil {
		return nil, nil, err
	}
	if logged, ok, err := p.loggedLocked(want); ok || err != nil {
		if err != nil {
			return nil, nil, err
		}
		return p.replayLocked(logged)
	}
	e := want // (escapes: made once the call is known to be new)
	p.reachLocked(e.Seq)
	msg := p.r.callArgsTooLarge(e.Connector, e.Method, e.Args)
	if msg == "" {
		msg = p.r.stepNameTooLarge(e.Name) // (a step's name is kept as a call's arguments are)
	}
	if msg != "" {
		return nil, nil, errors.New(msg)
	}
	if _, err := p.chargeLocked(len(e.Args)+len(e.Name), func() (string, string) {
		if e.Kind == codemode.KindStep {
			return fmt.Sprintf("the name of step %d", e.Seq), "the step did not run"
		}
		return fmt.Sprintf("the arguments of call %d (codemode.%s)", e.Seq, e.Method), "the call was not made"
	}); err != nil {
		return nil, nil, err
	}
	if err := p.queueBeforeLocked(ctx, &e, false); err != nil {
		return nil, nil, err
	}
	return &e, nil, nil
}

// StepDone records the value or failure of a step that ran (deferred.go),
// even when the pass was stopped meanwhile. A value over the per-value cap
// is recorded as the step's failure, and that error thrown.
func (p *pass) StepDone(ctx context.Context, s sandbox.Step, value json.RawMessage, errMsg string) error {
	e := codemode.Entry{ExecutionID: p.run.ID, Seq: p.seqBase + s.Seq, Kind: codemode.KindStep, Connector: "codemode", Method: "step", Name: s.Name}
	var err error
	if errMsg != "" { // (the step's function threw it: the program has it)
		e.Error = short.Clip(errMsg, p.r.maxValue)
		_, err = p.answer(ctx, e, codemode.EntryError, nil)
	} else {
		_, err = p.answerValue(ctx, e, value)
	}
	return err
}

// awaitsSignIn is the stop message of a pass paused at e for a sign-in.
func awaitsSignIn(e codemode.Entry) string {
	return entryRef(e) + " awaits a sign-in to " + e.Connector
}

// callError is the error thrown into the program for a failed call: its
// message, and the details of the failure recorded as its result.
func callError(e codemode.Entry) error {
	if len(e.Result) > 0 && e.Kind == codemode.KindCall {
		return &sandbox.CallError{Message: e.Error, Details: e.Result}
	}
	return errors.New(e.Error)
}

// rawOrNull returns v, or JSON null when v is empty.
func rawOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// sameArgs reports whether logged arguments are args, which are canonical.
func sameArgs(logged, args json.RawMessage) bool {
	if bytes.Equal(logged, args) {
		return true
	}
	canon, _, err := jsonref.Canonical(logged)
	return err == nil && bytes.Equal(canon, args)
}

// entryRef names an entry in messages: call 3 (fx.get), step 4 ("now").
func entryRef(e codemode.Entry) string {
	switch e.Kind {
	case codemode.KindStep:
		return fmt.Sprintf("step %d (%q)", e.Seq, short.Clip(e.Name, maxQuotedArgs))
	case codemode.KindService:
		return fmt.Sprintf("call %d (%s)", e.Seq, describeEntry(e))
	}
	return fmt.Sprintf("call %d (%s.%s)", e.Seq, e.Connector, e.Method)
}

// maxQuotedArgs bounds what messages quote of a call's arguments or a
// step's name, in bytes.
const maxQuotedArgs = 200

// describeEntry is an entry as divergences name it: fx.get({"id":1}),
// codemode.search("open issues"), codemode.step("now").
func describeEntry(e codemode.Entry) string {
	switch e.Kind {
	case codemode.KindStep:
		return describeStep(e.Name)
	case codemode.KindService:
		inner := strings.TrimSuffix(strings.TrimPrefix(string(e.Args), "["), "]")
		return fmt.Sprintf("codemode.%s(%s)", e.Method, short.Clip(inner, maxQuotedArgs))
	}
	return fmt.Sprintf("%s.%s(%s)", e.Connector, e.Method, short.Clip(string(rawOrNull(e.Args)), maxQuotedArgs))
}

// describeStep is a step as messages name it, its name clipped as
// describeEntry clips arguments: a name may be as long as the per-value
// cap, and messages are a run's error or a call's failure.
func describeStep(name string) string {
	b, _ := json.Marshal(short.Clip(name, maxQuotedArgs))
	return fmt.Sprintf("codemode.step(%s)", b)
}

var _ sandbox.Checker = (*pass)(nil)

// Check is the check before a program runs (sandbox.Checker), against the
// catalog the pass began with (catalog.Catalog.Check).
func (p *pass) Check(ctx context.Context, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	return p.cat.Check(ctx, calls)
}
