package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestTaskTTLIsKeptWithinBounds(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		asked *int64
		want  time.Duration
	}{
		{nil, 24 * time.Hour},
		{ms(600000), 10 * time.Minute},
		{ms(1), time.Minute},
		{ms(-5), time.Minute},
		{ms(30 * 24 * 3600 * 1000), 7 * 24 * time.Hour},
		{ms(math.MaxInt64), 7 * 24 * time.Hour},
	} {
		if got := taskTTL(tc.asked); got != tc.want {
			t.Errorf("taskTTL(%v) = %v, want %v", tc.asked, got, tc.want)
		}
	}
}

func TestATaskExpiresAfterItsTTL(t *testing.T) {
	at := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	e := &codemode.Execution{CreatedAt: at, Task: &codemode.Task{TTL: time.Hour}}
	if expired(e, at.Add(time.Hour)) || !expired(e, at.Add(time.Hour+time.Millisecond)) {
		t.Error("a task expires just after its TTL")
	}
	if expired(&codemode.Execution{CreatedAt: at, Task: &codemode.Task{}}, at.Add(1000*time.Hour)) {
		t.Error("a task without a TTL expired")
	}
}

func TestRunStatusesAsTaskStatuses(t *testing.T) {
	for _, tc := range []struct {
		run            codemode.ExecStatus
		legacy, modern string
	}{
		{codemode.StatusRunning, "working", "working"},
		{codemode.StatusWaiting, "working", "working"},
		{codemode.StatusPaused, "input_required", "input_required"},
		{codemode.StatusCompleted, "completed", "completed"},
		{codemode.StatusError, "failed", "completed"},
		{codemode.StatusRejected, "failed", "completed"},
		{codemode.StatusRollingBack, "failed", "completed"},
		{codemode.StatusRolledBack, "failed", "completed"},
		{codemode.StatusCancelled, "cancelled", "cancelled"},
	} {
		e := &codemode.Execution{Status: tc.run, Error: "why", Task: &codemode.Task{}}
		if got := string(viewTask(e, nil, false).Status); got != tc.legacy {
			t.Errorf("%s: 2025-11-25 status %s, want %s", tc.run, got, tc.legacy)
		}
		if got := string(viewTask(e, nil, true).Status); got != tc.modern {
			t.Errorf("%s: 2026-07-28 status %s, want %s", tc.run, got, tc.modern)
		}
	}
	if len(codemode.ExecStatuses()) != 9 {
		t.Errorf("%d run statuses: map the new one to a task status", len(codemode.ExecStatuses()))
	}
}

// A client of 2026-07-28 may answer a paused task's questions one
// tasks/update at a time: the answers accepted before count with the
// later ones, an answer given now wins over one remembered, and a
// question no longer asked is forgotten.
func TestPartialAnswersAddUp(t *testing.T) {
	accept, decline := mcp.ElicitationResponseActionAccept, mcp.ElicitationResponseActionDecline
	q := func(keys ...string) []question {
		var qs []question
		for _, k := range keys {
			qs = append(qs, question{key: k})
		}
		return qs
	}
	var p partialAnswers
	first := map[string]mcp.ElicitationResponseAction{"a": accept}
	p.merge("", "t", q("a", "b"), first)
	if !maps.Equal(first, map[string]mcp.ElicitationResponseAction{"a": accept}) {
		t.Errorf("first update: %v", first)
	}
	second := map[string]mcp.ElicitationResponseAction{"b": accept}
	p.merge("", "t", q("a", "b"), second)
	if !maps.Equal(second, map[string]mcp.ElicitationResponseAction{"a": accept, "b": accept}) {
		t.Errorf("second update: %v, want a (accepted before) and b", second)
	}
	third := map[string]mcp.ElicitationResponseAction{"a": decline}
	p.merge("", "t", q("a", "b"), third)
	if !maps.Equal(third, map[string]mcp.ElicitationResponseAction{"a": decline, "b": accept}) {
		t.Errorf("third update: %v, want a as answered now, b remembered", third)
	}
	other := map[string]mcp.ElicitationResponseAction{}
	p.merge("", "t", q("c"), other)
	p.merge("", "t", q("b"), other)
	if len(other) != 0 {
		t.Errorf("after another pause: %v, want nothing remembered of the one before", other)
	}
	p.forget("t")
	if len(p.accepted) != 0 {
		t.Errorf("forgotten task still remembered: %v", p.accepted)
	}
}

// One person answering tasks in part in a loop makes room among their own
// remembered answers only: another person's accepted answer is still
// counted. Without an issuer (one principal), a full memory forgets the
// least recently answered task, not every task's answers.
func TestPartialAnswersMakeRoomPerPerson(t *testing.T) {
	accept := mcp.ElicitationResponseActionAccept
	q := []question{{key: "a"}, {key: "b"}}
	remembered := func(p *partialAnswers, subject, id string) bool {
		got := map[string]mcp.ElicitationResponseAction{}
		p.merge(subject, id, q, got)
		return got["a"] == accept
	}
	var p partialAnswers
	p.merge("alice", "alice-task", q, map[string]mcp.ElicitationResponseAction{"a": accept})
	for i := range maxSessions + 10 {
		p.merge("mallory", fmt.Sprintf("mallory-%d", i), q, map[string]mcp.ElicitationResponseAction{"a": accept})
	}
	if !remembered(&p, "alice", "alice-task") {
		t.Error("another person's updates made alice's accepted answer be forgotten")
	}
	if n := len(p.accepted); n > maxPersonPartial+1 {
		t.Errorf("%d tasks remembered, want at most %d of mallory's and alice's one", n, maxPersonPartial)
	}

	var one partialAnswers
	for i := range maxSessions {
		one.merge("", fmt.Sprintf("t-%d", i), q, map[string]mcp.ElicitationResponseAction{"a": accept})
	}
	one.merge("", "t-new", q, map[string]mcp.ElicitationResponseAction{"a": accept})
	if len(one.accepted) > maxSessions {
		t.Errorf("%d tasks remembered, want at most %d", len(one.accepted), maxSessions)
	}
	if !remembered(&one, "", fmt.Sprintf("t-%d", maxSessions-1)) {
		t.Error("a full memory forgot the task answered just before the newest")
	}
	if remembered(&one, "", "t-0") {
		t.Error("a full memory kept the least recently answered task")
	}
}

// A front follows at most maxFollowers tasks at once; a task past them is
// not followed (its client polls), and a follower that ends makes room.
func TestFollowersAreBounded(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	f := s.newFront(t.Context())
	defer f.stop()
	for range maxFollowers { // as many followers as may live
		f.following <- struct{}{}
	}
	// A task that has ended, so that a follower, were it started, would
	// end at once without reading the store.
	done := mcp.Task{TaskId: "t-done", Status: mcp.TaskStatusCompleted}
	if f.follow(nil, done) {
		t.Fatal("followed a task past maxFollowers")
	}
	<-f.following // one follower ended
	if !f.follow(nil, done) {
		t.Fatal("a task was not followed with room for it")
	}
	f.wg.Wait() // its follower ends at once (the task has ended) and gives its room back
	if len(f.following) != maxFollowers-1 {
		t.Fatalf("%d followers held, want %d", len(f.following), maxFollowers-1)
	}
}

// awaitEngine is an Engine whose Await reads a paused run each time the
// test sends on poll, and says on asked what until answered.
type awaitEngine struct {
	Engine // nil: only Await is used
	poll   chan struct{}
	asked  chan bool
}

func (e *awaitEngine) Await(ctx context.Context, id string, _ time.Duration, until func(*codemode.Execution) bool) (*codemode.Execution, error) {
	run := &codemode.Execution{ID: id, Status: codemode.StatusPaused, CreatedAt: time.Now(), Task: &codemode.Task{TTL: time.Hour}}
	for {
		select {
		case <-e.poll:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		ok := until(run)
		e.asked <- ok
		if ok {
			return run, nil
		}
	}
}

// idSession is a registered session with an id, and nothing else.
type idSession struct{ id string }

func (s *idSession) SessionID() string                                   { return s.id }
func (s *idSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (s *idSession) Initialize()                                         {}
func (s *idSession) Initialized() bool                                   { return true }

// A follower of a task that waits (for days, perhaps) ends when its
// session goes, at its next read of the task, and gives its room back.
func TestAFollowerEndsWhenItsSessionGoes(t *testing.T) {
	e := &awaitEngine{poll: make(chan struct{}), asked: make(chan bool)}
	s := &Server{log: slog.New(slog.DiscardHandler), rt: e}
	f := s.newFront(t.Context())
	defer f.stop()
	sess := &idSession{id: "s-1"}
	s.clients.Store(sess.id, sess)
	if !f.follow(sess, mcp.Task{TaskId: "t-waits", Status: mcp.TaskStatusInputRequired}) {
		t.Fatal("the task was not followed")
	}
	e.poll <- struct{}{}
	if <-e.asked {
		t.Fatal("the follower stopped waiting while its session lives and its task is unchanged")
	}
	s.clients.Delete(sess.id) // as mcp-go unregisters it
	e.poll <- struct{}{}
	if !<-e.asked {
		t.Fatal("the follower goes on after its session went")
	}
	f.wg.Wait()
	if len(f.following) != 0 {
		t.Fatalf("%d followers held after the only one ended", len(f.following))
	}
}
