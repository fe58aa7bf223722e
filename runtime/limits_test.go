package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// Outcomes are whole: what a run printed and returned, as the store keeps
// it (a surface cuts what it shows: the MCP server, to max_result_chars);
// only a value over the log's per-value cap is a cut copy, with a note.
func TestOutcomesAreWhole(t *testing.T) {
	tests := []struct {
		name  string
		code  string
		check func(t *testing.T, o codemode.Outcome)
	}{
		{"many console lines", `async () => {
			for (let i = 0; i < 20000; i++) console.log("processing item " + i);
			return "x".repeat(100000);
		}`, func(t *testing.T, o codemode.Outcome) {
			if len(o.Result) != 100002 || len(o.Logs) != 20000 {
				t.Errorf("result of %d bytes and %d lines, want all of them", len(o.Result), len(o.Logs))
			}
		}},
		{"5 MB result over the log's per-value cap", `async () => "x".repeat(5e6)`, func(t *testing.T, o codemode.Outcome) {
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
			e := newEnv(t, setup{limits: sandbox.Limits{Timeout: 2 * time.Minute}})
			o := e.run(tt.code, nil)
			mustStatus(t, o, codemode.StatusCompleted)
			tt.check(t, o)
			x, _, err := e.rt.Execution(e.ctx, o.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if string(x.Result) != string(o.Result) || !cmp.Equal(x.Logs, o.Logs) {
				t.Errorf("the outcome differs from what the store keeps")
			}
		})
	}
}

// Values over the per-value cap are never logged: the call or step fails
// with a message saying why, and a replay fails the same way without calling
// the connector again. A program result over the cap is kept as a cut copy,
// and so is the error a program throws.
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
		{"step name", `async () => { try { await codemode.step("n".repeat(2000), () => 1) } catch (e) { return e.message } }`,
			codemode.StatusCompleted, `"the name of a codemode.step is 2 KiB; the execution log keeps at most 1000 bytes per value — name the step briefly"`, nil, ""},
		{"program error", `async () => { throw new Error("e".repeat(2000)) }`,
			codemode.StatusError, "Error: " + strings.Repeat("e", 993) + "…", nil, ""},
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

// The arguments of a pending action are whole, in the paused outcome
// and in Pending, as logged; approving runs the call with them.
func TestPendingArgsAreWhole(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.put({ key: "k", value: "v".repeat(100000) }); return "done" }`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	pending, err := e.rt.Pending(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for what, ps := range map[string][]codemode.PendingAction{"outcome": o.Pending, "Pending": pending} {
		var v struct{ Key, Value string }
		if len(ps) != 1 || json.Unmarshal(ps[0].Args, &v) != nil || v.Key != "k" || len(v.Value) != 100000 {
			t.Fatalf("%s: %d pending actions, the first with args of %d bytes", what, len(ps), len(ps[0].Args))
		}
	}
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)
	if got, _ := e.kv.get("k"); len(got) != 100000 {
		t.Errorf("the approved call stored %d bytes, want the whole 100000", len(got))
	}
}
