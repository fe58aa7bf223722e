package runtime_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// A run's log has a quota over all its passes: the call or step that would
// take it past the quota ends the run in error (uncatchably: the program's
// catch does not run), naming the quota and its setting; what was logged
// before stays. Sizes: a step of 1,000 x's keeps 1,002 bytes; kv.add's
// arguments {"key":"kN","value":"x…"} 1,023 and its result 28; kv.get's
// arguments {"key":"big"} 13 and its result 1,025.
func TestRunLogQuota(t *testing.T) {
	const quota = 4096
	name1000 := strings.Repeat("n", 1000)
	tests := []struct {
		name  string
		code  string
		log   []string
		error string // the run's error, after "the run's log reached its quota: "
		adds  int    // calls of kv.add made
		gets  int    // calls of kv.get made
	}{
		{"step values", `async () => {
			let caught = 0;
			for (let i = 0; i < 10; i++) {
				try { await codemode.step("s", () => "x".repeat(1000)) } catch (e) { caught++ }
			}
			return caught;
		}`, []string{"1 step(s) applied", "2 step(s) applied", "3 step(s) applied", "4 step(s) applied", "5 step(s) error"},
			`the value of step 5, codemode.step("s"), 1002 bytes, would take it to 4.9 KiB, over the 4 KiB a run may log (store.max_run_log); its value is not kept.`, 0, 0},
		{"step names", `async () => {
			for (let i = 0; i < 10; i++) await codemode.step("n".repeat(1000), () => 1);
		}`, []string{"1 step(" + name1000 + ") applied", "2 step(" + name1000 + ") applied", "3 step(" + name1000 + ") applied", "4 step(" + name1000 + ") applied"},
			`the name of step 5, 1000 bytes, would take it to 4.9 KiB, over the 4 KiB a run may log (store.max_run_log); the step did not run.`, 0, 0},
		{"call arguments", `async () => {
			for (let i = 0; i < 10; i++) {
				try { await kv.add({ key: "k" + i, value: "x".repeat(1000) }) } catch (e) {}
			}
		}`, []string{"1 kv.add applied", "2 kv.add applied", "3 kv.add applied"},
			`the arguments of call 4 (kv.add), 1023 bytes, would take it to 4.1 KiB, over the 4 KiB a run may log (store.max_run_log); the call was not made.`, 3, 0},
		{"call results", `async () => {
			for (let i = 0; i < 10; i++) {
				try { await kv.get({ key: "big" }) } catch (e) {}
			}
		}`, []string{"1 kv.get applied", "2 kv.get applied", "3 kv.get applied", "4 kv.get error"},
			`the result of call 4 (kv.get), 1 KiB, would take it to 4.1 KiB, over the 4 KiB a run may log (store.max_run_log); the call ran, but its result is not kept.`, 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{maxLog: quota})
			e.kv.mu.Lock()
			e.kv.data["big"] = strings.Repeat("x", 1000)
			e.kv.mu.Unlock()
			o := e.run(tt.code, nil)
			mustStatus(t, o, codemode.StatusError)
			want := "the run's log reached its quota: " + tt.error
			if !strings.HasPrefix(o.Error, want) {
				t.Errorf("error\n%s\nwant it to begin with\n%s", o.Error, want)
			}
			if diff := cmp.Diff(tt.log, e.log(o.ExecutionID)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			x, entries, err := e.rt.Execution(e.ctx, o.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if x.Error != o.Error {
				t.Errorf("stored error %q, outcome's %q", x.Error, o.Error)
			}
			kept := 0
			for _, en := range entries {
				kept += len(en.Args) + len(en.Result) + len(en.Name)
				if en.State == codemode.EntryError && en.Error != o.Error {
					t.Errorf("entry %d's error %q, want the run's", en.Seq, en.Error)
				}
			}
			if kept > quota {
				t.Errorf("the log keeps %d bytes of values, over the quota of %d", kept, quota)
			}
			if n := e.kv.count("add"); n != tt.adds {
				t.Errorf("kv.add called %d times, want %d", n, tt.adds)
			}
			if n := e.kv.count("get"); n != tt.gets {
				t.Errorf("kv.get called %d times, want %d", n, tt.gets)
			}
		})
	}
}

// The quota counts every pass of a run: after an approval, the log of the
// passes before counts, so a run cannot pass the quota by pausing.
func TestRunLogQuotaSpansPasses(t *testing.T) {
	e := newEnv(t, setup{maxLog: 4096})
	o := e.run(`async () => {
		for (let i = 0; i < 2; i++) await codemode.step("a", () => "x".repeat(1000));
		await kv.put({ key: "p", value: "v" });
		for (let i = 0; i < 3; i++) await codemode.step("b", () => "x".repeat(1000));
		return "done";
	}`, nil)
	mustStatus(t, o, codemode.StatusPaused)
	a := e.approve(o.ExecutionID, nil)
	mustStatus(t, a, codemode.StatusError)
	if want := `the run's log reached its quota: the value of step 6, codemode.step("b"), 1002 bytes, would take it to 4.9 KiB`; !strings.HasPrefix(a.Error, want) {
		t.Errorf("error %q, want it to begin with %q", a.Error, want)
	}
	want := []string{"1 step(a) applied", "2 step(a) applied", "3 kv.put applied", "4 step(b) applied", "5 step(b) applied", "6 step(b) error"}
	if diff := cmp.Diff(want, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
