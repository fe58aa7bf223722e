package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/internal/procid"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// callsProgram is a program making n sequential notes.listNotes calls.
func callsProgram(n int) string {
	return fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await notes.listNotes({}); return "done" }`, n)
}

// runCalls runs callsProgram(n) and returns its execution id.
func runCalls(t *testing.T, c *client.Client, n int) string {
	t.Helper()
	out, isErr := call(t, c, "codemode", map[string]any{"code": callsProgram(n)})
	if isErr || out["status"] != "completed" {
		t.Fatalf("run of %d calls: %v", n, out)
	}
	return out["executionId"].(string)
}

// executionsText calls codemode_executions and returns its text content,
// checked to be valid JSON and the same object as structuredContent (call).
func executionsText(t *testing.T, c *client.Client, args map[string]any) string {
	t.Helper()
	call(t, c, "codemode_executions", args)
	req := mcp.CallToolRequest{}
	req.Params.Name = "codemode_executions"
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("codemode_executions failed: %v", res.Content)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if !json.Valid([]byte(text)) {
		t.Fatalf("codemode_executions: not valid JSON: %.200s", text)
	}
	return text
}

func TestExecutionsListsFewCallsPerRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxChars int
		calls    int
		listed   int
		more     float64 // moreCalls; 0: absent
	}{
		{"small run is unchanged", 24000, 3, 3, 0},
		{"exactly the calls listed", 24000, 20, 20, 0},
		{"one call over", 24000, 21, 20, 1},
		{"long run", 24000, 300, 20, 280},
		{"no limit keeps every call", 0, 300, 300, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, newServerLimited(t, tc.maxChars), nil)
			id := runCalls(t, c, tc.calls)
			text := executionsText(t, c, map[string]any{"limit": 1})
			if tc.maxChars > 0 {
				if n := utf8.RuneCountInString(text); n > tc.maxChars {
					t.Errorf("answer of %d characters, over max_result_chars %d", n, tc.maxChars)
				}
			}
			var got struct {
				Executions []struct {
					ExecutionID string           `json:"executionId"`
					Code        string           `json:"code"`
					Calls       []map[string]any `json:"calls"`
					MoreCalls   *float64         `json:"moreCalls"`
				} `json:"executions"`
			}
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Executions) != 1 {
				t.Fatalf("want one execution: %.300s", text)
			}
			e := got.Executions[0]
			if e.ExecutionID != id || e.Code != callsProgram(tc.calls) {
				t.Errorf("execution %q code %q, want %q %q", e.ExecutionID, e.Code, id, callsProgram(tc.calls))
			}
			var seqs, wantSeqs []int
			for i, cl := range e.Calls {
				seqs = append(seqs, int(cl["seq"].(float64)))
				wantSeqs = append(wantSeqs, i+1)
				if cl["method"] != "listNotes" || cl["connector"] != "notes" || cl["state"] != "applied" {
					t.Errorf("call %d: %v", i, cl)
				}
			}
			if len(e.Calls) != tc.listed {
				t.Errorf("listed %d calls, want %d", len(e.Calls), tc.listed)
			}
			if diff := cmp.Diff(wantSeqs, seqs); diff != "" {
				t.Errorf("calls are not the first ones in order (-want +got):\n%s", diff)
			}
			switch {
			case tc.more == 0 && e.MoreCalls != nil:
				t.Errorf("moreCalls %v, want absent", *e.MoreCalls)
			case tc.more != 0 && (e.MoreCalls == nil || *e.MoreCalls != tc.more):
				t.Errorf("moreCalls %v, want %v", e.MoreCalls, tc.more)
			}
		})
	}
}

func TestExecutionsAnswerFitsMaxResultChars(t *testing.T) {
	const maxChars = 2000
	c := connect(t, newServerLimited(t, maxChars), nil)
	var last string
	for range 4 {
		last = runCalls(t, c, 30)
	}
	for _, limit := range []int{1, 500} {
		t.Run(fmt.Sprint("limit=", limit), func(t *testing.T) {
			text := executionsText(t, c, map[string]any{"limit": limit})
			if n, size := utf8.RuneCountInString(text), measure(t, json.RawMessage(text)); n > maxChars || size > maxChars {
				t.Errorf("answer of %d characters (measure %d), over max_result_chars %d", n, size, maxChars)
			}
			var got map[string][]any
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("answer is not an object of executions: %v: %.300s", err, text)
			}
			first, ok := got["executions"][0].(map[string]any)
			if !ok || first["executionId"] != last {
				t.Fatalf("first execution does not name the newest run %s: %.300s", last, text)
			}
			if first["moreCalls"] != float64(10) {
				t.Errorf("moreCalls %v, want 10", first["moreCalls"])
			}
			if !strings.Contains(text, " more items") {
				t.Errorf("a cut answer must show the truncation marker: %.300s", text)
			}
		})
	}
}

// A run whose process died is shown recovered: error, saying it was
// interrupted, its call in flight unknown; a rollback reports what it
// reverted and what failed.
func TestInterruptedRunIsShownAndRolledBack(t *testing.T) {
	ctx := context.Background()
	s := newServerRT(t, server.Options{}, 0, func(st *sqlite.Store, n *notes.Notes) {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		self := procid.Self()
		dead := codemode.Owner{ID: "own_dead", Host: self.Host, Boot: self.Boot, PID: cmd.Process.Pid, Lease: time.Minute}
		if err := st.RegisterOwner(ctx, dead); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateExecution(ctx, &codemode.Execution{ID: "exec_cut", Code: "async () => {}", Status: codemode.StatusRunning, Owner: "own_dead"}); err != nil {
			t.Fatal(err)
		}
		args := json.RawMessage(`{"text":"made before the crash"}`)
		made, err := n.Call(ctx, "createNote", args)
		if err != nil || made.IsError {
			t.Fatalf("createNote: %+v, %v", made, err)
		}
		log := []codemode.Entry{
			{ExecutionID: "exec_cut", Seq: 1, Kind: codemode.KindCall, Connector: "notes", Method: "createNote", Args: args, Result: made.Value, State: codemode.EntryApplied},
			{ExecutionID: "exec_cut", Seq: 2, Kind: codemode.KindCall, Connector: "notes", Method: "createNote", Args: json.RawMessage(`{"text":"in flight"}`), State: codemode.EntryExecuting},
		}
		if err := st.WriteEntries(ctx, log, nil); err != nil {
			t.Fatal(err)
		}
	})
	c := connect(t, s, nil)
	var listed struct {
		Executions []struct {
			ExecutionID, Status, Error string
			Calls                      []struct {
				Seq          int
				State, Error string
			}
		}
	}
	if err := json.Unmarshal([]byte(executionsText(t, c, map[string]any{})), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Executions) != 1 {
		t.Fatalf("executions: %+v", listed)
	}
	x := listed.Executions[0]
	if x.Status != "error" || !strings.Contains(x.Error, "interrupted") || len(x.Calls) != 2 || x.Calls[0].State != "applied" ||
		x.Calls[1].State != "unknown" || !strings.Contains(x.Calls[1].Error, "may or may not") {
		t.Fatalf("the interrupted run as codemode_executions shows it: %+v", x)
	}
	out, isErr := call(t, c, "codemode_rollback", map[string]any{"executionId": "exec_cut"})
	if isErr || out["status"] != "rolled_back" {
		t.Fatalf("rollback: %v", out)
	}
	if got := fmt.Sprint(out["reverted"]); got != "[1]" {
		t.Errorf("reverted = %s, want [1]", got)
	}
	failures, _ := out["failures"].([]any)
	if len(failures) != 1 || !strings.Contains(fmt.Sprint(failures[0]), "its outcome is unknown") {
		t.Errorf("failures = %v, want call 2's revert, saying its outcome was unknown", out["failures"])
	}
}

// codemode_executions reads each run listed once: the calls of a run are
// read without its result and console output again (LogQuery.NoOutput),
// which the list already holds (up to a megabyte each).
func TestExecutionsReadsEachRunOnce(t *testing.T) {
	const runs, size = 5, 900_000
	c := connect(t, newServerLimited(t, 24000), nil)
	for range runs {
		if out, _ := call(t, c, "codemode", map[string]any{"code": fmt.Sprintf(`async () => { console.log("l".repeat(%d)); return "r".repeat(%d) }`, size, size)}); out["status"] != "completed" {
			t.Fatalf("run: %v", out)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	executionsText(t, c, map[string]any{"limit": runs})
	runtime.ReadMemStats(&after)
	// executionsText calls the tool twice; each call reads each run's
	// result and logs (2*size) once, in a few copies.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d runs of %d bytes of output: %d MB allocated", runs, 2*size, alloc>>20)
	if limit := uint64(2 * runs * 2 * size * 4); alloc > limit {
		t.Errorf("codemode_executions allocated %d MB for %d runs of %d bytes of output, want at most %d MB: it reads each run again", alloc>>20, runs, 2*size, limit>>20)
	}
}
