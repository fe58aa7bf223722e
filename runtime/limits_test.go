package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// toolResponse renders an outcome the way the codemode tool returns it: the
// outcome's JSON as text content and the outcome as structuredContent.
func toolResponse(t *testing.T, o codemode.Outcome) []byte {
	t.Helper()
	text, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := json.Marshal(map[string]any{
		"content":           []map[string]any{{"type": "text", "text": string(text)}},
		"structuredContent": json.RawMessage(text),
		"isError":           o.IsError(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// The acceptance test of issue 4: 200,000 console lines or a 5 MB result
// reach the client as a response under 200 KB, still valid JSON, with a
// visible truncation marker; the store keeps the full value.
func TestLargeOutputReachesTheClientCut(t *testing.T) {
	const maxChars = 24000
	tests := []struct {
		name     string
		maxValue int
		code     string
		status   codemode.ExecStatus
		check    func(t *testing.T, o codemode.Outcome)
	}{
		{"200,000 console lines", 0, `async () => {
			for (let i = 0; i < 200000; i++) console.log("processing item " + i + " of 200000");
			return "done";
		}`, codemode.StatusCompleted, func(t *testing.T, o codemode.Outcome) {
			if string(o.Result) != `"done"` {
				t.Errorf("result %s", o.Result)
			}
			if o.Logs[0] != "processing item 0 of 200000" {
				t.Errorf("first line %q", o.Logs[0])
			}
			last := o.Logs[len(o.Logs)-1]
			if !strings.HasPrefix(last, "… ") || !strings.HasSuffix(last, " more log lines truncated") {
				t.Errorf("last line %q, want the truncation marker", last)
			}
			if n := len(o.Logs) - 1; n < 500 {
				t.Errorf("only %d lines kept", n)
			}
		}},
		{"5 MB result", 16 << 20, `async () => Array.from({ length: 50000 }, (_, i) => ({ id: i, name: "item-" + i, text: "x".repeat(80) }))`,
			codemode.StatusCompleted, func(t *testing.T, o codemode.Outcome) {
				var items []json.RawMessage
				if err := json.Unmarshal(o.Result, &items); err != nil {
					t.Fatalf("result is not an array: %v", err)
				}
				if len(items) < 50 {
					t.Errorf("only %d items kept", len(items))
				}
				if last := string(items[len(items)-1]); !strings.HasSuffix(last, ` more items"`) {
					t.Errorf("last item %s, want the truncation marker", last)
				}
				var first struct {
					ID   int    `json:"id"`
					Text string `json:"text"`
				}
				if err := json.Unmarshal(items[0], &first); err != nil || first.Text != strings.Repeat("x", 80) {
					t.Errorf("first item %s is not whole", items[0])
				}
			}},
		{"5 MB result over the log's per-value cap", 0, `async () => "x".repeat(5e6)`,
			codemode.StatusCompleted, func(t *testing.T, o codemode.Outcome) {
				var s string
				if err := json.Unmarshal(o.Result, &s); err != nil || !strings.HasPrefix(s, "xxxx") || !strings.Contains(s, "…[truncated ") {
					t.Errorf("result %.80s…, want a cut string with the marker", o.Result)
				}
				want := "[warn] the program's result is 4.8 MiB; the execution log keeps at most 1 MiB per value — it keeps a cut copy; return less, e.g. filter, summarise or paginate"
				if len(o.Logs) == 0 || o.Logs[len(o.Logs)-1] != want {
					t.Errorf("logs %q, want the note %q", o.Logs, want)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{maxChars: maxChars, maxValue: tt.maxValue, limits: sandbox.Limits{Timeout: 2 * time.Minute}})
			start := time.Now()
			o := e.run(tt.code, nil)
			elapsed := time.Since(start)
			mustStatus(t, o, tt.status)
			resp := toolResponse(t, o)
			t.Logf("run took %v; outcome measures %d characters; the tool response is %d bytes",
				elapsed.Round(time.Millisecond), truncate.Size(o.Result)+truncate.LogsSize(o.Logs), len(resp))
			if len(resp) >= 200_000 {
				t.Errorf("tool response is %d bytes, want under 200 KB", len(resp))
			}
			if !json.Valid(resp) || (len(o.Result) > 0 && !json.Valid(o.Result)) {
				t.Fatal("invalid JSON")
			}
			if n := truncate.Size(o.Result) + truncate.LogsSize(o.Logs) + len(o.Error); n > maxChars {
				t.Errorf("outcome measures %d characters, budget %d", n, maxChars)
			}
			tt.check(t, o)

			// The store keeps the whole value.
			x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if tt.status == codemode.StatusCompleted && len(x.Result)+len(strings.Join(x.Logs, "")) < 1<<20 {
				t.Errorf("the store kept %d bytes of result and %d of logs; want the whole output", len(x.Result), len(strings.Join(x.Logs, "")))
			}
		})
	}
}

// An outcome within MaxResultChars is untouched, and 0 shows everything.
func TestResultLimitLeavesSmallOutcomes(t *testing.T) {
	code := `async () => { console.log("a", {b: 1}); return {items: [1, 2, 3], text: "x".repeat(5000)} }`
	for _, maxChars := range []int{0, 24000} {
		e := newEnv(t, setup{maxChars: maxChars})
		o := e.run(code, nil)
		mustStatus(t, o, codemode.StatusCompleted)
		want := `{"items":[1,2,3],"text":"` + strings.Repeat("x", 5000) + `"}`
		if string(o.Result) != want || !cmp.Equal(o.Logs, []string{`a {"b":1}`}) {
			t.Errorf("maxChars %d: outcome changed: %.100s %q", maxChars, o.Result, o.Logs)
		}
	}
}

// Error messages are cut with the console lines; approvals, rejections and
// rollbacks return cut outcomes too.
func TestResultLimitOnEveryOutcome(t *testing.T) {
	e := newEnv(t, setup{maxChars: 500})
	o := e.run(`async () => { throw new Error("bad " + "y".repeat(5000)) }`, nil)
	mustStatus(t, o, codemode.StatusError)
	if len(o.Error) > 500 || !strings.Contains(o.Error, "…[truncated ") {
		t.Errorf("error of %d bytes: %.80q…", len(o.Error), o.Error)
	}

	o = e.run(`async () => {
		for (let i = 0; i < 100; i++) console.log("line " + i);
		await kv.put({ key: "k", value: "v" });
		return "z".repeat(5000);
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	if n := truncate.LogsSize(o.Logs); n > 500 || !strings.HasSuffix(o.Logs[len(o.Logs)-1], "more log lines truncated") {
		t.Errorf("paused outcome logs measure %d: %q", n, o.Logs)
	}
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if n := truncate.Size(a.Result) + truncate.LogsSize(a.Logs); n > 500 {
		t.Errorf("approved outcome measures %d", n)
	}
	rb, err := e.rt.Rollback(e.ctx, o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if n := truncate.LogsSize(rb.Logs); n > 500 {
		t.Errorf("rollback outcome logs measure %d", n)
	}
}

// Values over the per-value cap are never logged: the call or step fails
// with a message saying why, and a replay fails the same way without calling
// the connector again. A program result over the cap is kept as a cut copy.
func TestPerValueCap(t *testing.T) {
	e := newEnv(t, setup{maxValue: 1000})
	e.kv.mu.Lock()
	e.kv.data["big"] = strings.Repeat("x", 2000)
	e.kv.mu.Unlock()

	tests := []struct {
		name    string
		code    string
		status  codemode.ExecStatus
		want    string // the result (completed) or error
		log     []string
		counted string // a kv tool whose call count must rise by one
	}{
		{"arguments", `async () => { try { await kv.add({ key: "k", value: "v".repeat(2000) }) } catch (e) { return e.message } }`,
			codemode.StatusCompleted, `"the arguments of kv.add are 2 KiB; the execution log keeps at most 1000 bytes per value — pass less, e.g. split the work into several calls"`,
			nil, ""},
		{"call result", `async () => { try { await kv.get({ key: "big" }) } catch (e) { return e.message } }`,
			codemode.StatusCompleted, `"the result of kv.get is 2 KiB; the execution log keeps at most 1000 bytes per value — ask for less, e.g. filter or paginate"`,
			[]string{"1 kv.get error"}, "get"},
		{"step value", `async () => { try { await codemode.step("s", () => "s".repeat(2000)) } catch (e) { return e.message } }`,
			codemode.StatusCompleted, `"the value of codemode.step(\"s\") is 2 KiB; the execution log keeps at most 1000 bytes per value — return less from the step, e.g. only the fields used later"`,
			[]string{"1 step(s) error"}, ""},
		{"program result", `async () => "r".repeat(2000)`,
			codemode.StatusCompleted, `"` + strings.Repeat("r", 975) + `…[truncated 1025 chars]"`, nil, ""},
		{"within the cap", `async () => (await kv.get({ key: "nothing" })).key + "r".repeat(900)`,
			codemode.StatusCompleted, `"nothing` + strings.Repeat("r", 900) + `"`, []string{"1 kv.get applied"}, "get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := 0
			if tt.counted != "" {
				before = e.kv.count(tt.counted)
			}
			o := e.run(tt.code, nil)
			mustStatus(t, o, tt.status)
			got := string(o.Result)
			if tt.status != codemode.StatusCompleted {
				got = o.Error
			}
			if got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
			if diff := cmp.Diff(tt.log, e.log(o.ExecutionID), cmp.Transformer("nil", func(s []string) []string {
				if len(s) == 0 {
					return nil
				}
				return s
			})); diff != "" {
				t.Errorf("log mismatch (-want +got):\n%s", diff)
			}
			if tt.counted != "" {
				if n := e.kv.count(tt.counted) - before; n != 1 {
					t.Errorf("kv.%s called %d times, want 1", tt.counted, n)
				}
			}
		})
	}

	// Replay: the oversized result is an error in the log, thrown again on
	// resume without calling kv.get again.
	calls := e.kv.count("get")
	o := e.run(`async () => {
		let msg;
		try { await kv.get({ key: "big" }) } catch (e) { msg = e.message }
		await kv.put({ key: "after", value: "v" });
		return msg;
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusCompleted)
	if !strings.HasPrefix(string(a.Result), `"the result of kv.get is 2 KiB`) {
		t.Errorf("replayed result %s", a.Result)
	}
	if n := e.kv.count("get") - calls; n != 1 {
		t.Errorf("kv.get called %d times over run and replay, want 1", n)
	}
}

// The arguments of a pending action are shown cut, like results (valid
// JSON of the same shape, with a marker), in the paused outcome and in
// Pending; approving runs the call with the whole arguments as logged.
func TestPendingArgsAreShownCut(t *testing.T) {
	e := newEnv(t, setup{maxChars: 500})
	o := e.run(`async () => { await kv.put({ key: "k", value: "v".repeat(100000) }); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	pending, err := e.rt.Pending(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for what, ps := range map[string][]codemode.PendingAction{"outcome": o.Pending, "Pending": pending} {
		if len(ps) != 1 {
			t.Fatalf("%s: %d pending actions", what, len(ps))
		}
		args := ps[0].Args
		var v struct{ Key, Value string }
		if err := json.Unmarshal(args, &v); err != nil {
			t.Fatalf("%s: args are not JSON: %v: %.100s", what, err, args)
		}
		if truncate.Size(args) > 500 || v.Key != "k" || !strings.Contains(v.Value, "truncated") {
			t.Errorf("%s: args of %d bytes: %.120s", what, len(args), args)
		}
	}
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)
	if got, _ := e.kv.get("k"); len(got) != 100000 {
		t.Errorf("the approved call stored %d bytes, want the whole 100000", len(got))
	}
}
