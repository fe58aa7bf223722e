package runtime_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

func TestApproverDecides(t *testing.T) {
	e := newEnv(t, setup{})
	code := `async () => { await kv.add({ key: "first", value: "1" }); const p = await kv.put({ key: "k", value: "v" }); return "after put"; }`
	tests := []struct {
		name    string
		answer  codemode.Decision
		err     error
		status  codemode.ExecStatus
		puts    int
		wantLog []string
	}{
		{"accept", codemode.Accept, nil, codemode.StatusCompleted, 1, []string{"1 kv.add applied", "2 kv.put applied"}},
		{"decline", codemode.Decline, nil, codemode.StatusRejected, 0, []string{"1 kv.add applied", "2 kv.put rejected"}},
		{"no answer", codemode.NoAnswer, nil, codemode.StatusPaused, 0, []string{"1 kv.add applied", "2 kv.put pending"}},
		{"approver error", codemode.Accept, errors.New("client cannot elicit"), codemode.StatusPaused, 0, []string{"1 kv.add applied", "2 kv.put pending"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			putsBefore := e.kv.count("put")
			var asked []codemode.PendingAction
			ap := approverFunc(func(_ context.Context, a codemode.PendingAction) (codemode.Decision, error) {
				asked = append(asked, a)
				return tc.answer, tc.err
			})
			o := e.run(code, ap)
			mustStatus(t, o, tc.status)
			want := []codemode.PendingAction{{ExecutionID: o.ExecutionID, Seq: 2, Connector: "kv", Method: "put", Args: []byte(`{"key":"k","value":"v"}`)}}
			if diff := cmp.Diff(want, asked); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
			if got := e.kv.count("put") - putsBefore; got != tc.puts {
				t.Errorf("put ran %d times, want %d", got, tc.puts)
			}
			if diff := cmp.Diff(tc.wantLog, e.log(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if tc.status == codemode.StatusCompleted && resultOf[string](t, o) != "after put" {
				t.Errorf("result = %s", o.Result)
			}
		})
	}
}

// The approver given to Approve is asked about later calls of the resumed
// run.
func TestApproveWithApproverForLaterCalls(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "a", value: "1" }); await kv.put({ key: "b", value: "2" }); return "ok" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	var asked []codemode.PendingAction
	a := e.approve(o.ExecutionID, decide(codemode.Accept, &asked))
	mustStatus(t, a, codemode.StatusCompleted)
	if len(asked) != 1 || asked[0].Seq != 2 {
		t.Errorf("asked = %+v, want only the second put (the first was approved already)", asked)
	}
}

func TestStaleApprovalIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		after setup
		want  string
	}{
		{"changed", setup{kv: func() *kv { k := newKV("kv"); k.extra = "ttl"; return k }()}, "kv (tools changed)"},
		{"gone", setup{noKV: true, notes: true}, "kv (gone)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			o := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
			mustStatus(t, o, codemode.StatusPaused)
			e.restart(tc.after)
			_, err := e.rt.Approve(e.ctx, o.ExecutionID, nil)
			if !errors.Is(err, codemode.ErrConnectorsChanged) {
				t.Fatalf("approve: err = %v, want ErrConnectorsChanged", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), o.ExecutionID) {
				t.Errorf("message %q should name the execution and %q", err, tc.want)
			}
			if got := e.status(o.ExecutionID); got != codemode.StatusPaused {
				t.Errorf("status after refused approve = %s, want paused", got)
			}
			if _, err := e.rt.Reject(e.ctx, o.ExecutionID, 0); err != nil {
				t.Errorf("reject after refused approve: %v", err)
			}
		})
	}
}

// Descriptions are not part of the fingerprint: a new description does not
// make a paused run stale.
func TestApprovalSurvivesUnchangedConnectors(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "k", value: "v" }); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	e.restart(setup{})
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)
}

func TestPendingAcrossRuns(t *testing.T) {
	e := newEnv(t, setup{})
	var ids []string
	for i := range 3 {
		o := e.run(fmt.Sprintf(`async () => { await kv.put({ key: "k%d", value: "v" }) }`, i), nil)
		mustStatus(t, o, codemode.StatusPaused)
		ids = append(ids, o.ExecutionID)
	}
	done := e.run(`async () => 1`, nil)
	mustStatus(t, done, codemode.StatusCompleted)

	all, err := e.rt.Pending(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range all {
		got = append(got, p.ExecutionID+" "+string(p.Args))
	}
	want := []string{
		ids[0] + ` {"key":"k0","value":"v"}`,
		ids[1] + ` {"key":"k1","value":"v"}`,
		ids[2] + ` {"key":"k2","value":"v"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pending(\"\") (-want +got):\n%s", diff)
	}
	one, err := e.rt.Pending(e.ctx, ids[1])
	if err != nil || len(one) != 1 || one[0].ExecutionID != ids[1] {
		t.Errorf("Pending(%s) = %+v, %v; want its one action", ids[1], one, err)
	}
	none, err := e.rt.Pending(e.ctx, done.ExecutionID)
	if err != nil || len(none) != 0 {
		t.Errorf("Pending(completed) = %+v, %v; want none", none, err)
	}
	if _, err := e.rt.Pending(e.ctx, "exec_missing"); !errors.Is(err, codemode.ErrUnknownExecution) {
		t.Errorf("Pending(unknown): err = %v, want ErrUnknownExecution", err)
	}
	if _, err := e.rt.Reject(e.ctx, ids[0], 0); err != nil {
		t.Fatal(err)
	}
	if all, _ := e.rt.Pending(e.ctx, ""); len(all) != 2 {
		t.Errorf("after rejecting one run, %d pending; want 2", len(all))
	}
}

// Pending of every paused run reads what it needs of each run (its id
// and starter), not its program: the console's fingerprint asks for it
// every few seconds for a person who approves. 20 paused runs of 512 kB
// programs (10 MB) make it allocate far less than that.
func TestPendingOfEveryRunReadsNoPrograms(t *testing.T) {
	e := newEnv(t, setup{})
	const runs, size = 20, 512 << 10
	for i := range runs {
		o := e.run(fmt.Sprintf(`async () => { await kv.put({ key: "k%d", value: "v" }) } // %s`, i, strings.Repeat("p", size)), nil)
		mustStatus(t, o, codemode.StatusPaused)
	}
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	all, err := e.rt.Pending(e.ctx, "")
	goruntime.ReadMemStats(&m1)
	if err != nil || len(all) != runs {
		t.Fatalf("Pending(\"\") = %d actions, %v; want %d", len(all), err, runs)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > runs*size/10 {
		t.Errorf("Pending(\"\") of %d paused runs of %d-byte programs allocated %d bytes, want at most %d", runs, size, n, runs*size/10)
	}
}

// Pending reads of each paused run the entries that await a person, not
// its whole log: 3 paused runs that each logged 8 steps of 512 kB results
// (12 MB) make Pending("") and Pending(id) allocate far less than that.
func TestPendingReadsNotTheWholeLog(t *testing.T) {
	e := newEnv(t, setup{})
	const runs, steps, size = 3, 8, 512 << 10
	var ids []string
	for i := range runs {
		o := e.run(fmt.Sprintf(`async () => {
			for (let i = 0; i < %d; i++) await codemode.step("s" + i, async () => "r".repeat(%d));
			await kv.put({ key: "k%d", value: "v" });
		}`, steps, size-16, i), nil)
		mustStatus(t, o, codemode.StatusPaused)
		ids = append(ids, o.ExecutionID)
	}
	for _, id := range []string{"", ids[1]} {
		var m0, m1 goruntime.MemStats
		goruntime.ReadMemStats(&m0)
		got, err := e.rt.Pending(e.ctx, id)
		goruntime.ReadMemStats(&m1)
		want := runs
		if id != "" {
			want = 1
		}
		if err != nil || len(got) != want || got[0].Seq != steps+1 || string(got[0].Args) == "" {
			t.Fatalf("Pending(%q) = %+v, %v; want %d actions, each call %d", id, got, err, want, steps+1)
		}
		if n, bound := m1.TotalAlloc-m0.TotalAlloc, uint64(want*steps*size/10); n > bound {
			t.Errorf("Pending(%q) of %d paused runs, each with %d steps of %d bytes logged, allocated %d bytes, want at most %d", id, want, steps, size, n, bound)
		}
	}
}

// The process that paused is gone: a new one on the same database approves
// and the run completes with every side effect exactly once.
func TestApproveInANewProcess(t *testing.T) {
	s := setup{noKV: true, mcp: true, notes: true}
	e := newEnv(t, s)
	o := e.run(`async () => {
		const n = await fx.counter({ name: "read" });
		const note = await notes.createNote({ text: "read " + n + " time(s)" });
		const list = await notes.listNotes({});
		return { n, texts: list.notes.map(x => x.text) };
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	if o.Pending[0].Method != "createNote" {
		t.Fatalf("pending = %+v, want notes.createNote", o.Pending)
	}

	e.restart(s)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	got := resultOf[map[string]any](t, a)
	want := map[string]any{"n": 1.0, "texts": []any{"read 1 time(s)"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if n := e.effectCount("read"); n != 1 {
		t.Errorf("the read ran %d times, want 1", n)
	}
	notes := func() (n int) {
		t.Helper()
		if err := e.store.ScanRecords(e.ctx, "notes", func(connectors.Record) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count := notes(); count != 1 {
		t.Errorf("%d notes created, want 1", count)
	}

	// The notes connector reverts createNote natively.
	r, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2}, r.Reverted); diff != "" || len(r.Failures) != 0 {
		t.Errorf("rollback reverted %v (-want +got %s), failures %v", r.Reverted, diff, r.Failures)
	}
	if count := notes(); count != 0 {
		t.Errorf("%d notes left after rollback, want 0", count)
	}
}

// Racing approvals of one paused run: exactly one resumes it.
func TestConcurrentApprovesOneWins(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "k", value: "v" }); return "ok" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = e.rt.Approve(e.ctx, o.ExecutionID, nil) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, codemode.ErrWrongState):
			t.Errorf("losing approve: err = %v, want ErrWrongState", err)
		}
	}
	if won != 1 {
		t.Errorf("%d approves won, want 1", won)
	}
	if got := e.kv.count("put"); got != 1 {
		t.Errorf("put ran %d times, want 1", got)
	}
}

func TestConcurrentRuns(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	const n = 10
	var wg sync.WaitGroup
	outs := make([]codemode.Outcome, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			outs[i], errs[i] = e.rt.Execute(e.ctx, fmt.Sprintf(`async () => {
				const s = await fx.get_sum({ a: %d, b: 1 });
				await kv.add({ key: "k%d", value: String(s) });
				return s;
			}`, i, i), nil)
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		mustStatus(t, outs[i], codemode.StatusCompleted)
		if got := resultOf[float64](t, outs[i]); got != float64(i+1) {
			t.Errorf("run %d result = %v, want %d", i, got, i+1)
		}
		if v, _ := e.kv.get(fmt.Sprintf("k%d", i)); v != fmt.Sprint(i+1) {
			t.Errorf("k%d = %q", i, v)
		}
		ids[outs[i].ExecutionID] = true
		if diff := cmp.Diff([]string{"1 fx.get_sum applied", "2 kv.add applied"}, e.log(outs[i].ExecutionID)); diff != "" {
			t.Errorf("run %d log (-want +got):\n%s", i, diff)
		}
	}
	if len(ids) != n {
		t.Errorf("%d distinct execution ids, want %d", len(ids), n)
	}
}

func TestWrongStateRequests(t *testing.T) {
	e := newEnv(t, setup{})
	done := e.run(`async () => 1`, nil)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"approve completed", func() error { _, err := e.rt.Approve(e.ctx, done.ExecutionID, nil); return err },
			"has completed; only a paused execution can be approved"},
		{"reject completed", func() error { _, err := e.rt.Reject(e.ctx, done.ExecutionID, 0); return err },
			"has completed; only a paused execution can be rejected"},
		{"rollback twice", func() error {
			if _, err := e.rt.Rollback(e.ctx, done.ExecutionID); err != nil {
				return err
			}
			_, err := e.rt.Rollback(e.ctx, done.ExecutionID)
			return err
		}, "was rolled back; only a completed, failed, rejected, cancelled or paused execution can be rolled back"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, codemode.ErrWrongState) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrWrongState containing %q", err, tc.want)
			}
		})
	}
	for _, call := range []func() error{
		func() error { _, err := e.rt.Approve(e.ctx, "exec_nope", nil); return err },
		func() error { _, err := e.rt.Reject(e.ctx, "exec_nope", 0); return err },
		func() error { _, err := e.rt.Rollback(e.ctx, "exec_nope"); return err },
		func() error { return e.rt.DeleteExecution(e.ctx, "exec_nope") },
		func() error { _, _, err := e.rt.Execution(e.ctx, "exec_nope"); return err },
	} {
		if err := call(); !errors.Is(err, codemode.ErrUnknownExecution) {
			t.Errorf("unknown id: err = %v, want ErrUnknownExecution", err)
		}
	}
}

// An approved call whose replay diverges (the program now makes another
// call in its place) never runs, and the run that ends in error does not
// leave it executing.
func TestApprovedCallThatDivergesIsSettled(t *testing.T) {
	e := newEnv(t, setup{})
	redefineSnippet(t, e, "pick", `async () => 1`)
	code := `async () => {
		const n = await codemode.run("pick");
		await kv.put({ key: "k" + n, value: "v" });
	}`
	o := e.run(code, nil)
	mustStatus(t, o, codemode.StatusPaused)
	// A redefined snippet gives another value, so the replay makes a
	// different call.
	redefineSnippet(t, e, "pick", `async () => 2`)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusError)
	if !strings.Contains(a.Error, "diverged") {
		t.Errorf("error %q does not say the replay diverged", a.Error)
	}
	if diff := cmp.Diff([]string{"1 kv.put error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if n := e.kv.count("put"); n != 0 {
		t.Errorf("kv.put ran %d times", n)
	}
}

// No human is awaited under the pass's lock: while the approver is asked
// about one call, the program's other calls are decided, made, and their
// results reach the program.
func TestOtherCallsGoOnWhileTheApproverIsAsked(t *testing.T) {
	k := newKV("kv")
	gotGet := make(chan struct{})
	var once sync.Once
	k.hook = func(_ context.Context, tool string) error {
		if tool == "get" {
			once.Do(func() { close(gotGet) })
		}
		return nil
	}
	e := newEnv(t, setup{kv: k})
	var waited bool
	ap := approverFunc(func(ctx context.Context, a codemode.PendingAction) (codemode.Decision, error) {
		select {
		case <-gotGet: // add ran and its result reached the program, which then called get
			waited = true
			return codemode.Accept, nil
		case <-ctx.Done():
			return codemode.NoAnswer, ctx.Err()
		}
	})
	o := e.run(`async () => {
		const gated = kv.put({ key: "g", value: "v" });
		await kv.add({ key: "a", value: "1" });
		await kv.get({ key: "a" });
		await gated;
		return "done";
	}`, ap)
	mustStatus(t, o, codemode.StatusCompleted)
	if !waited {
		t.Fatal("the approver was answered before the other calls ran")
	}
	if diff := cmp.Diff([]string{"1 kv.put applied", "2 kv.add applied", "3 kv.get applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// An answer that comes after the call was cancelled (here: the program
// returned without awaiting it) is not applied: the call never runs, and
// the ending run settles it rejected.
func TestLateApproverAnswer(t *testing.T) {
	k := newKV("kv")
	asked := make(chan struct{})
	k.hook = func(_ context.Context, tool string) error {
		if tool == "get" {
			<-asked // the program returns only once put's question is open
		}
		return nil
	}
	e := newEnv(t, setup{kv: k})
	ap := approverFunc(func(ctx context.Context, a codemode.PendingAction) (codemode.Decision, error) {
		close(asked)
		<-ctx.Done() // the person answers only after the program is gone
		return codemode.Accept, nil
	})
	o := e.run(`async () => {
		kv.put({ key: "a", value: "1" }).catch(() => {});
		await kv.get({ key: "x" });
		return "done";
	}`, ap)
	mustStatus(t, o, codemode.StatusCompleted)
	if n := k.count("put"); n != 0 {
		t.Errorf("put ran %d times; a late answer must not run it", n)
	}
	if diff := cmp.Diff([]string{"1 kv.put rejected", "2 kv.get applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// Racing approve, reject and rollback of one paused run: approve and
// reject exclude each other, rollback wins at most once, every loser gets
// ErrWrongState, and what the winners did is what the run's state and
// side effects show.
func TestConcurrentApproveRejectRollback(t *testing.T) {
	e := newEnv(t, setup{})
	approved := 0
	for round := range 20 {
		key := fmt.Sprintf("k%d", round)
		o := e.run(fmt.Sprintf(`async () => { await kv.add({ key: "a%[1]d", value: "1" }); await kv.put({ key: "k%[1]d", value: "v" }); return "ok" }`, round), nil)
		mustStatus(t, o, codemode.StatusPaused)
		const each = 2
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := map[string]int{}
		lose := func(what string, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won[what]++
			case !errors.Is(err, codemode.ErrWrongState):
				t.Errorf("round %d: losing %s: err = %v, want ErrWrongState", round, what, err)
			}
		}
		for range each {
			wg.Go(func() { _, err := e.rt.Approve(e.ctx, o.ExecutionID, nil); lose("approve", err) })
			wg.Go(func() { _, err := e.rt.Reject(e.ctx, o.ExecutionID, 0); lose("reject", err) })
			wg.Go(func() { _, err := e.rt.Rollback(e.ctx, o.ExecutionID); lose("rollback", err) })
		}
		wg.Wait()
		if won["approve"]+won["reject"] > 1 || won["rollback"] > 1 || len(won) == 0 {
			t.Fatalf("round %d: winners %v; want at most one of approve and reject, at most one rollback", round, won)
		}
		approved += won["approve"]
		x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		_, applied := e.kv.get(key)
		switch {
		case won["rollback"] == 1:
			if _, a := e.kv.get(fmt.Sprintf("a%d", round)); x.Status != codemode.StatusRolledBack || a || applied {
				t.Errorf("round %d: winners %v: status %s, add kept %v, put kept %v", round, won, x.Status, a, applied)
			}
		case won["approve"] == 1:
			if x.Status != codemode.StatusCompleted || !applied {
				t.Errorf("round %d: winners %v: status %s, put applied %v", round, won, x.Status, applied)
			}
		default:
			if x.Status != codemode.StatusRejected || applied {
				t.Errorf("round %d: winners %v: status %s, put applied %v", round, won, x.Status, applied)
			}
		}
	}
	if got := e.kv.count("put"); got != approved {
		t.Errorf("put ran %d times; approve won %d rounds", got, approved)
	}
}

// askedStore records the snippet names and execution ids the runtime
// asks the store for.
type askedStore struct {
	codemode.Store
	mu                   sync.Mutex
	snippets, executions []string
}

func (s *askedStore) wrap(real codemode.Store) codemode.Store { s.Store = real; return s }

func (s *askedStore) GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	s.mu.Lock()
	s.snippets = append(s.snippets, name)
	s.mu.Unlock()
	return s.Store.GetSnippet(ctx, name)
}

func (s *askedStore) GetExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	s.mu.Lock()
	s.executions = append(s.executions, id)
	s.mu.Unlock()
	return s.Store.GetExecution(ctx, id)
}

// A request about an id no run can have (longer than any the runtime
// makes) is refused as unknown without asking the store, and neither the
// error nor the refusal's outcome repeats the id whole.
func TestRequestWithImpossibleIDIsRefusedClipped(t *testing.T) {
	is := &askedStore{}
	e := newEnv(t, setup{wrap: is.wrap})
	id := "exec_" + strings.Repeat("9", 1<<20)
	for name, call := range map[string]func() error{
		"approve":  func() error { _, err := e.rt.Approve(e.ctx, id, nil); return err },
		"reject":   func() error { _, err := e.rt.Reject(e.ctx, id, 0); return err },
		"rollback": func() error { _, err := e.rt.Rollback(e.ctx, id); return err },
		"delete":   func() error { return e.rt.DeleteExecution(e.ctx, id) },
	} {
		err := call()
		if !errors.Is(err, codemode.ErrUnknownExecution) || !strings.Contains(err.Error(), `unknown execution "exec_999`) || len(err.Error()) > 200 {
			t.Errorf("%s: err = %.200q (%d bytes), want ErrUnknownExecution quoting the id clipped", name, err, len(err.Error()))
		}
		if o := e.rt.RefusalOutcome(e.ctx, id, err); len(o.ExecutionID) > 200 || len(o.Error) > 200 {
			t.Errorf("%s: the refusal's outcome has an id of %d bytes and an error of %d", name, len(o.ExecutionID), len(o.Error))
		}
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, got := range is.executions {
		if len(got) > 64 {
			t.Errorf("the store was asked for execution %.40q… (%d bytes)", got, len(got))
		}
	}
}

// A decision is made on the run as it was read: a rejection that read
// the run paused before one action, shown that action, does not end it
// once an approval through another process (another runtime on the same
// store) has run it on to pause before another action, which nobody
// rejecting was shown. (Only the status was compared: paused again, the
// rejection went through, with the run's fields as it had read them.)
// So also on a clock that did not tick between the pause, the approval
// and the new pause, as Windows' may not for 15.6 ms: the new pause bore
// the stamp of the one the rejection read.
func TestARejectionDoesNotEndARunThatPausedAgain(t *testing.T) {
	for name, clk := range map[string]*fixture.Clock{"real clock": nil, "clock that did not tick": fixture.NewClock()} {
		t.Run(name, func(t *testing.T) {
			cs := &countingStore{}
			a := newEnv(t, setup{wrap: cs.wrap, clock: clk})
			b := newEnvAt(t, a.dbPath, setup{clock: clk})
			o := a.run(`async () => { await kv.put({ key: "a", value: "1" }); await kv.put({ key: "b", value: "2" }); return 1 }`, nil)
			mustStatus(t, o, codemode.StatusPaused)
			var again codemode.Outcome
			cs.beforeStatus = func(x *codemode.Execution) {
				if x.Status == codemode.StatusRejected && again.ExecutionID == "" {
					again = b.approve(o.ExecutionID, nil)
				}
			}
			_, err := a.rt.RejectReviewed(a.ctx, o.ExecutionID, 0, codemode.Review{Digest: a.digestOf(o.ExecutionID)})
			mustStatus(t, again, codemode.StatusPaused)
			if !errors.Is(err, codemode.ErrWrongState) {
				t.Errorf("the rejection of what the run no longer waits for: %v, want ErrWrongState", err)
			}
			if got := a.status(o.ExecutionID); got != codemode.StatusPaused {
				t.Errorf("the run is %s, want paused before its second put", got)
			}
			if diff := cmp.Diff([]string{"1 kv.put applied", "2 kv.put pending"}, a.log(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// The expiry of a paused run, by a process whose clock runs ahead of the
// approver's by more than the paused TTL, does not end the run once the
// approver's process (which finds it not expired) ran it on to pause
// again: the expiry decided about the pause it read, not the new one,
// although the approver's clock did not tick in between.
func TestAnExpiryOnAClockAheadDoesNotEndANewPause(t *testing.T) {
	behind := fixture.NewClock()
	b := newEnv(t, setup{clock: behind, ttl: time.Hour})
	o := b.run(`async () => { await kv.put({ key: "a", value: "1" }); await kv.put({ key: "b", value: "2" }); return 1 }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	ahead := fixture.NewClock()
	ahead.Advance(2 * time.Hour)
	cs := &countingStore{}
	var again codemode.Outcome
	cs.beforeStatus = func(x *codemode.Execution) {
		if x.ID == o.ExecutionID && x.Status == codemode.StatusRejected && again.ExecutionID == "" {
			again = b.approve(o.ExecutionID, nil)
		}
	}
	a := newEnvAt(t, b.dbPath, setup{wrap: cs.wrap, clock: ahead, ttl: time.Hour, hkEvery: -1})
	a.run(`async () => 1`, nil) // its housekeeping expires what it finds paused for over an hour
	mustStatus(t, again, codemode.StatusPaused)
	if got := b.status(o.ExecutionID); got != codemode.StatusPaused {
		t.Errorf("the run is %s, want paused before its second put", got)
	}
	if diff := cmp.Diff([]string{"1 kv.put applied", "2 kv.put pending"}, b.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
