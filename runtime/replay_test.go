package runtime_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestCompletedRun(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
		const s = await fx.get_sum({ a: 40, b: 2 });
		await kv.add({ key: "k", value: "v" });
		console.log("sum", s, { ok: true });
		return { s, got: await kv.get({ key: "k" }) };
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	got := resultOf[map[string]any](t, o)
	want := map[string]any{"s": 42.0, "got": map[string]any{"key": "k", "value": "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(o.ExecutionID, "exec_") || len(o.ExecutionID) != len("exec_")+16 {
		t.Errorf("execution id = %q, want exec_ + 16 hex digits", o.ExecutionID)
	}
	if diff := cmp.Diff([]string{`sum 42 {"ok":true}`}, o.Logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	wantLog := []string{"1 fx.get_sum applied", "2 kv.add applied", "3 kv.get applied"}
	if diff := cmp.Diff(wantLog, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := x.Connectors["fx"]; !ok || len(x.Connectors) != 2 {
		t.Errorf("recorded connectors = %v, want fingerprints of fx and kv", x.Connectors)
	}
}

func TestScriptErrorIsAnOutcome(t *testing.T) {
	e := newEnv(t, setup{})
	tests := []struct {
		name, code, want string
	}{
		{"throw", `async () => { throw new Error("nope") }`, "nope"},
		{"tool error", `async () => { await kv.fail({ reason: "disk full" }) }`, "kv failed: disk full"},
		{"syntax", "async () => { let x = ; }", "line"},
		{"invalid args", `async () => { const args = { key: "", extra: 1 }; return kv.put(args) }`, "invalid arguments for kv.put"},
		{"invalid args seen before running", `async () => kv.put({ key: "", extra: 1 })`, "checked before running"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := e.run(tc.code, nil)
			mustStatus(t, o, codemode.StatusError)
			if !strings.Contains(o.Error, tc.want) {
				t.Errorf("error = %q, want it to contain %q", o.Error, tc.want)
			}
			if !o.IsError() {
				t.Error("IsError() = false for an error outcome")
			}
		})
	}
}

func TestToolErrorIsLoggedAndCatchable(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		try { await kv.fail({ reason: "x" }) } catch (err) { return err.message }
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[string](t, o); got != "kv failed: x" {
		t.Errorf("caught message = %q, want the tool's message", got)
	}
	if diff := cmp.Diff([]string{"1 kv.fail error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestValidationListsEveryViolationAndRecordsNothing(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		const args = { key: "", value: 3, bogus: true }; // built at run time: the check before running does not see it
		try { await kv.put(args) } catch (err) { return err.message }
	}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	msg := resultOf[string](t, o)
	for _, want := range []string{"invalid arguments for kv.put", "/key", "/value", "bogus"} {
		if !strings.Contains(msg, want) {
			t.Errorf("validation message %q does not mention %q", msg, want)
		}
	}
	if got := e.log(o.ExecutionID); len(got) != 0 {
		t.Errorf("log = %v, want nothing recorded for invalid arguments", got)
	}
	if e.kv.count("put") != 0 {
		t.Error("put was called despite invalid arguments")
	}
}

// Cloudflare: "pauses before a side effect; approve executes it once and
// does not re-run earlier reads".
func TestPauseApproveRunsSideEffectOnceWithoutRerunningReads(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	code := `async () => {
		const n = await fx.counter({ name: "read" });
		const prev = await kv.put({ key: "k", value: "v" + n });
		return { n, prev };
	}`
	o := e.run(code, nil)
	mustStatus(t, o, codemode.StatusPaused)
	wantPending := []codemode.PendingAction{{ExecutionID: o.ExecutionID, Seq: 2, Connector: "kv", Method: "put", Args: []byte(`{"key":"k","value":"v1"}`)}}
	if diff := cmp.Diff(wantPending, o.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if e.kv.count("put") != 0 {
		t.Fatal("put ran before approval")
	}

	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if got := resultOf[map[string]any](t, a); got["n"] != 1.0 {
		t.Errorf("result = %v, want the read's first value replayed", got)
	}
	if got := e.effectCount("read"); got != 1 {
		t.Errorf("the read ran %d times, want 1", got)
	}
	if got := e.kv.count("put"); got != 1 {
		t.Errorf("put ran %d times, want 1", got)
	}
	if v, _ := e.kv.get("k"); v != "v1" {
		t.Errorf("k = %q, want v1", v)
	}
	if diff := cmp.Diff([]string{"1 fx.counter applied", "2 kv.put applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}

	// A second approve is a safe error and changes nothing.
	_, err := e.rt.Approve(e.ctx, o.ExecutionID, nil)
	if !errors.Is(err, codemode.ErrWrongState) {
		t.Fatalf("second approve: err = %v, want ErrWrongState", err)
	}
	if want := "execution " + o.ExecutionID + " has completed; only a paused execution can be approved"; err.Error() != want {
		t.Errorf("second approve message = %q, want %q", err, want)
	}
	if e.kv.count("put") != 1 || e.effectCount("read") != 1 {
		t.Error("second approve caused side effects")
	}
}

func TestPauseAgainAtALaterCall(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		await kv.put({ key: "a", value: "1" });
		await kv.add({ key: "between", value: "x" });
		await kv.put({ key: "b", value: "2" });
		return "done";
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusPaused)
	if diff := cmp.Diff([]codemode.PendingAction{{ExecutionID: o.ExecutionID, Seq: 3, Connector: "kv", Method: "put", Args: []byte(`{"key":"b","value":"2"}`)}}, a.Pending); diff != "" {
		t.Errorf("second pause pending (-want +got):\n%s", diff)
	}
	b := e.approve(o.ExecutionID, nil)
	mustStatus(t, b, codemode.StatusCompleted)
	if e.kv.count("put") != 2 || e.kv.count("add") != 1 {
		t.Errorf("calls put=%d add=%d, want 2 and 1", e.kv.count("put"), e.kv.count("add"))
	}
}

func TestRejectEndsRunWithNothingApplied(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.add({ key: "before", value: "1" }); await kv.put({ key: "k", value: "v" }); }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	r, err := e.rt.Reject(e.ctx, o.ExecutionID, 0)
	if err != nil {
		t.Fatalf("Reject: %v", err)
	}
	mustStatus(t, r, codemode.StatusRejected)
	if _, ok := e.kv.get("k"); ok || e.kv.count("put") != 0 {
		t.Error("the rejected put took effect")
	}
	if diff := cmp.Diff([]string{"1 kv.add applied", "2 kv.put rejected"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if _, err := e.rt.Approve(e.ctx, o.ExecutionID, nil); !errors.Is(err, codemode.ErrWrongState) {
		t.Errorf("approve after reject: err = %v, want ErrWrongState", err)
	}
	if _, err := e.rt.Reject(e.ctx, o.ExecutionID, 0); !errors.Is(err, codemode.ErrWrongState) {
		t.Errorf("reject after reject: err = %v, want ErrWrongState", err)
	}
	if e.kv.count("put") != 0 {
		t.Error("approve after reject ran the put")
	}
}

func TestRejectBySeq(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	if _, err := e.rt.Reject(e.ctx, o.ExecutionID, 7); !errors.Is(err, codemode.ErrWrongState) {
		t.Fatalf("reject of a seq that is not pending: err = %v, want ErrWrongState", err)
	}
	if got := e.status(o.ExecutionID); got != codemode.StatusPaused {
		t.Fatalf("a refused reject changed the status to %s", got)
	}
	r, err := e.rt.Reject(e.ctx, o.ExecutionID, 1)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, codemode.StatusRejected)
	if !strings.Contains(r.Error, "call 1 (kv.put)") {
		t.Errorf("reject message = %q, want it to name the call", r.Error)
	}
}

// Cloudflare: code that catches the pause and tries more calls still pauses
// with exactly one pending action and causes nothing.
func TestCatchingThePauseCausesNothing(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	tests := []struct{ name, code string }{
		{"sequential", `async () => {
			try { await kv.put({ key: "a", value: "1" }) } catch (err) { console.log("caught", err) }
			try { await kv.put({ key: "b", value: "2" }) } catch (err) {}
			await fx.counter({ name: "after" });
			await kv.add({ key: "after", value: "x" });
			return "escaped";
		}`},
		{"concurrent", `async () => {
			await Promise.allSettled([kv.put({ key: "a", value: "1" }), kv.put({ key: "b", value: "2" })]);
			await Promise.allSettled([fx.counter({ name: "after" }), kv.add({ key: "after", value: "x" })]);
			return "escaped";
		}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := e.run(tc.code, nil)
			mustStatus(t, o, codemode.StatusPaused)
			if len(o.Pending) != 1 || o.Pending[0].Method != "put" {
				t.Fatalf("pending = %+v, want exactly one kv.put", o.Pending)
			}
			if got := e.log(o.ExecutionID); len(got) != 1 || !strings.HasSuffix(got[0], "kv.put pending") {
				t.Errorf("log = %v, want only the pending put", got)
			}
			if e.kv.count("put") != 0 || e.kv.count("add") != 0 {
				t.Error("a call ran after the pause")
			}
			if got := e.effectCount("after"); got != 0 {
				t.Errorf("the counter after the pause ran %d times", got)
			}
		})
	}
}

// Cloudflare: Math.random() and Date.now() before a paused call replay, so
// approve completes without divergence.
func TestTimeAndRandomnessReplay(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		const r = Math.random(), t = Date.now(), d = new Date().toISOString();
		await kv.put({ key: "k", value: r + "|" + t + "|" + d });
		return r + "|" + t + "|" + d;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	v, _ := e.kv.get("k")
	if got := resultOf[string](t, a); got != v {
		t.Errorf("replayed values %q differ from the first pass's %q", got, v)
	}
}

// Cloudflare: Promise.all of two calls before a paused call; after approve
// each ran exactly once.
func TestPromiseAllBeforePause(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
		const [a, b] = await Promise.all([fx.counter({ name: "a" }), fx.counter({ name: "b" })]);
		await kv.put({ key: "sum", value: String(a + b) });
		return a + b;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	if o.Pending[0].Seq != 3 {
		t.Errorf("pending seq = %d, want 3", o.Pending[0].Seq)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if e.effectCount("a") != 1 || e.effectCount("b") != 1 {
		t.Errorf("counter a ran %d, b ran %d times; want 1 each", e.effectCount("a"), e.effectCount("b"))
	}
	if got := resultOf[float64](t, a); got != 2 {
		t.Errorf("result = %v, want 2", got)
	}
}

func TestStepReplaysItsValue(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		const v = await codemode.step("pick", () => ({ n: 6, at: Date.now() }));
		await kv.put({ key: "k", value: JSON.stringify(v) });
		return v;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if diff := cmp.Diff([]string{"1 step(pick) applied", "2 kv.put applied"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	_, entries, err := e.rt.Execution(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	var step map[string]any
	if err := json.Unmarshal(entries[0].Result, &step); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(step, resultOf[map[string]any](t, a)); diff != "" {
		t.Errorf("the step's recorded value and the result differ (-logged +result):\n%s", diff)
	}
}

// A recorded error replays as the same error without calling the tool again.
func TestRecordedErrorReplays(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		let msg;
		try { await kv.fail({ reason: "once" }) } catch (err) { msg = err.message }
		await kv.put({ key: "k", value: msg });
		return msg;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if got := resultOf[string](t, a); got != "kv failed: once" {
		t.Errorf("result = %q", got)
	}
	if n := e.kv.count("fail"); n != 1 {
		t.Errorf("fail ran %d times, want 1", n)
	}
}

// Divergence: the program calls something else at a logged seq on replay.
// A snippet the program runs is redefined between passes here (the
// lookup of a snippet's source is not logged), outside input of the kind
// codemode.step is for.
func TestDivergenceNamesBothSides(t *testing.T) {
	e := newEnv(t, setup{})
	redefineSnippet(t, e, "pick", `async () => 6`)
	o := e.run(`async () => {
		const v = await codemode.run("pick");
		await kv.get({ key: "picked-" + v });
		await kv.put({ key: "k", value: "v" });
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	redefineSnippet(t, e, "pick", `async () => 7`)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusError)
	for _, want := range []string{
		"replay diverged at call 1",
		`the log has kv.get({"key":"picked-6"})`,
		`the program now calls kv.get({"key":"picked-7"})`,
		"codemode.step",
	} {
		if !strings.Contains(a.Error, want) {
			t.Errorf("divergence error %q does not contain %q", a.Error, want)
		}
	}
	if e.kv.count("put") != 0 {
		t.Error("the approved call ran despite the divergence")
	}
	if diff := cmp.Diff([]string{"1 kv.get applied", "2 kv.put error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// A divergence at a step of a long name quotes both names clipped: the
// message is the run's error, which a name of up to the per-value cap
// would otherwise fill twice over.
func TestDivergenceAtLongStepNameIsClipped(t *testing.T) {
	e := newEnv(t, setup{})
	redefineSnippet(t, e, "pick", `async () => 1`)
	o := e.run(`async () => {
		const n = await codemode.run("pick");
		await codemode.step("x".repeat(1 << 19) + n, async () => 1);
		await kv.put({ key: "k", value: "v" });
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	redefineSnippet(t, e, "pick", `async () => 2`)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusError)
	if want := `replay diverged at call 1: the log has codemode.step("xxx`; !strings.Contains(a.Error, want) || len(a.Error) > 1000 {
		t.Errorf("divergence error of %d bytes: %.300q, want one under 1000 bytes containing %q", len(a.Error), a.Error, want)
	}
}

// codemode.search and codemode.describe answers are logged and replayed
// like connector results: a run paused after it searched, approved after
// a downstream's tools changed, gets the answers its first pass saw (a
// failure too), so it makes the same calls; a new search sees the change.
func TestServiceAnswersReplay(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
		const s = await codemode.search("brand new");
		const d = await codemode.describe("fx");
		let missing = "";
		try { await codemode.describe("fx.brand_new") } catch (err) { missing = err.message }
		const paths = s.results.map(r => r.path);
		await kv.get({ key: paths.join(",") + "|" + d.methods.length + "|" + missing });
		await kv.put({ key: "k", value: "v" });
		return { paths, methods: d.methods.map(m => m.method), missing };
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	mustStatus(t, e.run(`async () => await fx.add_tool({ name: "brand_new" })`, nil), codemode.StatusCompleted)
	if changed, err := e.rt.RefreshConnector(e.ctx, "fx"); err != nil || !changed {
		t.Fatalf("RefreshConnector = %v, %v", changed, err)
	}
	if found := searchPaths(t, e, "brand new"); len(found) == 0 || found[0] != "fx.brand_new" {
		t.Fatalf("a search after the change: %v, want fx.brand_new first", found)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	got := resultOf[struct {
		Paths, Methods []string
		Missing        string
	}](t, a)
	if slices.Contains(got.Paths, "fx.brand_new") || slices.Contains(got.Methods, "brand_new") || len(got.Methods) == 0 {
		t.Errorf("the replay saw the change: search %v, fx's methods %v", got.Paths, got.Methods)
	}
	if !strings.Contains(got.Missing, `unknown path "fx.brand_new"`) {
		t.Errorf("the replayed failure of describe(fx.brand_new) is %q", got.Missing)
	}
	want := []string{"1 codemode.search applied", "2 codemode.describe applied", "3 codemode.describe error", "4 kv.get applied", "5 kv.put applied"}
	if diff := cmp.Diff(want, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if n := e.kv.count("put"); n != 1 {
		t.Errorf("kv.put ran %d times, want 1", n)
	}
}

// redefineSnippet saves the snippet name as a run of code, in place of
// the one of that name if there is one.
func redefineSnippet(t *testing.T, e *env, name, code string) {
	t.Helper()
	src := e.run(code, nil)
	mustStatus(t, src, codemode.StatusCompleted)
	if err := e.rt.DeleteSnippet(e.ctx, name); err != nil && !errors.Is(err, codemode.ErrUnknownSnippet) {
		t.Fatal(err)
	}
	if _, err := e.rt.SaveSnippet(e.ctx, name, src.ExecutionID, "", nil); err != nil {
		t.Fatal(err)
	}
}

// A transport failure is logged as error and thrown with its message.
func TestTransportErrorIsLogged(t *testing.T) {
	k := newKV("kv")
	k.callErr["get"] = errors.New("connection reset")
	e := newEnv(t, setup{kv: k})
	o := e.run(`async () => { try { await kv.get({ key: "x" }) } catch (err) { return err.message } }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := resultOf[string](t, o); got != "kv.get failed: connection reset" {
		t.Errorf("thrown message = %q", got)
	}
	if diff := cmp.Diff([]string{"1 kv.get error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// A service answer the log holds malformed (the database was edited, or
// written by something else) is not trusted on replay: the program's call
// throws an error saying the answer is not JSON, as a connector result's
// would, and the pass goes on.
func TestMalformedLoggedServiceAnswer(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => {
		let got;
		try { got = (await codemode.search("kv")).results.length } catch (err) { got = err.message }
		await kv.put({ key: "k", value: "v" });
		return got;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	db, err := sql.Open("sqlite", e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(e.ctx, `UPDATE entries SET result = '{"results": [' WHERE execution_id = ? AND seq = 1`, o.ExecutionID); err != nil {
		t.Fatal(err)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if got := resultOf[string](t, a); !strings.Contains(got, "invalid JSON") {
		t.Errorf("codemode.search on replay of a malformed answer: %q, want an error saying the answer is invalid JSON", got)
	}
}
