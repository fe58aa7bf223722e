package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// logNotes records what the log of a running execution held at moments
// of a call.
type logNotes struct {
	env     *env
	mu      sync.Mutex
	atStart [][]string // guarded by mu
	atWait  [][]string // guarded by mu
}

// note appends the running execution's log as "seq state" lines.
func (s *logNotes) note(to *[][]string) {
	ctx := context.Background()
	runs, err := s.env.store.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusRunning})
	if err != nil || len(runs) != 1 {
		s.env.t.Errorf("running executions = %d, %v; want 1", len(runs), err)
		return
	}
	log, err := s.env.store.Entries(ctx, runs[0].ID)
	if err != nil {
		s.env.t.Errorf("Entries: %v", err)
		return
	}
	lines := []string{}
	for _, en := range log {
		lines = append(lines, strings.Fields(renderEntries([]codemode.Entry{en})[0])[0]+" "+en.State.String())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*to = append(*to, lines)
}

func newSendingEnv(t *testing.T, cs *countingStore, s setup) (*env, *sendingKV) {
	t.Helper()
	skv := &sendingKV{kv: newKV("kv")}
	return newNotingEnv(t, cs, s, skv, &skv.logNotes), skv
}

// newNotingEnv returns an env whose only connector is c, notes being
// where c records the log.
func newNotingEnv(t *testing.T, cs *countingStore, s setup, c connectors.Connector, notes *logNotes) *env {
	t.Helper()
	s.noKV, s.extra = true, []catalog.Source{{Connector: c}}
	if cs != nil {
		s.wrap = cs.wrap
	}
	e := newEnv(t, s)
	notes.env = e
	return e
}

// A read-only call is logged while it is in flight, through a connector
// that says when its request has left (connectors.CallHook's Sent): when
// its group is due (written through), each call's
// entry is committed before the connector waits for the answer, never
// after its result is used, and the results and the number of commits are
// those of any call. With long groups nothing is written until the pass
// ends.
func TestCallsAreLoggedInFlight(t *testing.T) {
	tests := []struct {
		through bool
		// the log when each call was sent (before Sent) and when it was
		// waited for (after Sent)
		wantSent, wantWait [][]string
		commits            int64
	}{
		{true, [][]string{{}, {"1 executing"}}, [][]string{{"1 executing"}, {"1 applied", "2 executing"}}, 5},
		{false, [][]string{{}, {}}, [][]string{{}, {}}, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("writeThrough=%v", tt.through), func(t *testing.T) {
			cs := &countingStore{}
			e, notes := newSendingEnv(t, cs, setup{writeThrough: tt.through, groupAge: time.Hour})
			o := e.run(loop("get", 2), nil)
			mustStatus(t, o, codemode.StatusCompleted)
			if diff := cmp.Diff(getEntries(2), e.entries(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSent, notes.atStart); diff != "" {
				t.Errorf("log when each call was sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWait, notes.atWait); diff != "" {
				t.Errorf("log when each call was waited for (-want +got):\n%s", diff)
			}
			if got := cs.commits.Load(); got != tt.commits {
				t.Errorf("commits = %d, want %d", got, tt.commits)
			}
		})
	}
}

// A call that fails before its request has left (no Sent) is the call's
// failure: logged, and thrown into the program, which can catch it.
func TestUnsentCallFailureIsTheCallsError(t *testing.T) {
	e, skv := newSendingEnv(t, nil, setup{})
	skv.sendErr = errors.New("server down")
	o := e.run(`async () => { try { await kv.get({ key: "k0" }) } catch (err) { return err.message } }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[string](t, o); !strings.Contains(got, "server down") {
		t.Errorf("program caught %q, want the send error", got)
	}
	if diff := cmp.Diff([]string{"1 kv.get error kv.get failed: server down"}, e.entries(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if n := skv.count("get"); n != 0 {
		t.Errorf("kv.get ran %d times, want 0", n)
	}
}

// When logging a call that is already in flight fails, the call is still
// waited for (it is not abandoned mid-way), its outcome is dropped, and the
// run ends with the internal failure.
func TestSentCallLogFailure(t *testing.T) {
	errDisk := errors.New("disk full")
	cs := &countingStore{}
	cs.beforeWrite = func(inserts []codemode.Entry, _ []codemode.EntryUpdate) (bool, error) {
		if len(inserts) > 0 {
			return false, errDisk
		}
		return false, nil
	}
	e, skv := newSendingEnv(t, cs, setup{})
	o, err := e.rt.Execute(e.ctx, `async () => { await kv.get({ key: "k0" }); return "unreachable" }`, nil)
	if !errors.Is(err, errDisk) {
		t.Errorf("Execute error = %v, want the store's failure", err)
	}
	mustStatus(t, o, codemode.StatusError)
	if !strings.Contains(o.Error, "internal failure") || !strings.Contains(o.Error, "disk full") {
		t.Errorf("error = %q, want the internal failure naming the write error", o.Error)
	}
	if n := skv.count("get"); n != 1 {
		t.Errorf("kv.get ran %d times, want 1 (sent, then waited for)", n)
	}
	if len(skv.atWait) != 1 {
		t.Errorf("the call was waited for %d times, want 1", len(skv.atWait))
	}
	if got := e.entries(o.ExecutionID); len(got) != 0 {
		t.Errorf("log = %q, want nothing (the only write failed)", got)
	}
}

// sendingKV is kv telling the runtime when each call's request has left
// (connectors.CallHook's Sent, as the OpenAPI and stdio MCP connectors
// do). It records what the log of the running execution held just before
// and just after.
type sendingKV struct {
	*kv
	logNotes
	sendErr error // Call fails with it before sending anything
}

func (s *sendingKV) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	s.note(&s.atStart)
	if s.sendErr != nil {
		return connectors.Result{}, s.sendErr
	}
	hook := connectors.CallHookFrom(ctx)
	hook.Sent()
	hook.Sent() // a request sent again: the log is written once
	s.note(&s.atWait)
	return s.kv.Call(ctx, tool, args)
}
