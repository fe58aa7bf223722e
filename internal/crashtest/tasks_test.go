package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// tasksVersion is the protocol of the tasks these tests drive.
const tasksVersion = "2025-11-25"

// createTask starts code as a task through s (a task-augmented codemode
// call) and returns the task's id.
func (s *server) createTask(code string) string {
	s.t.Helper()
	resp, err := s.client.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("create-task"), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": "codemode", "arguments": map[string]any{"code": code}, "task": map[string]any{}},
	})
	if err != nil || resp.Error != nil {
		s.t.Fatalf("create task: %v %+v\nstderr:\n%s", err, resp, s.stderr)
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.Status != mcp.TaskStatusWorking {
		s.t.Fatalf("create task: %v: %s", err, resp.Result)
	}
	return created.Task.TaskId
}

// task returns task id as tasks/get reports it through s.
func (s *server) task(id string) *mcp.GetTaskResult {
	s.t.Helper()
	r, err := s.client.GetTask(context.Background(), mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
	if err != nil {
		s.t.Fatalf("tasks/get %s: %v\nstderr:\n%s", id, err, s.stderr)
	}
	return r
}

// Kill -9 the server while a task works, or while it waits for an
// approval: after the restart tasks/get says failed with the recovery's
// reason (the run rolls back), or input_required (it is approved once).
func TestKillDuringATask(t *testing.T) {
	rng, rounds := seeded(t)
	for round := range rounds {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			w := newWorld(t)
			a := w.startWith(tasksVersion)
			waiting := round%2 == 1
			var id string
			var d time.Duration
			if waiting {
				id = a.createTask(counters("c", 20, `await fx.counter({ name: "first" }); await fx.delete_thing({ id: "x" });`))
				fixture.Until(t, "the task asks for input", func() bool { return a.task(id).Status == mcp.TaskStatusInputRequired })
				a.kill()
			} else {
				id = a.createTask(counters("c", 3000, ""))
				d = crashAfter(rng, a, 100*time.Millisecond, 900*time.Millisecond)
			}
			effects := w.effects()
			b := w.startWith(tasksVersion)
			defer b.stop()
			noRunRunning(t, b)
			got := b.task(id)
			t.Logf("killed after %v (waiting: %v): %d side effects downstream, task %s: %s", d, waiting, len(effects), got.Status, got.StatusMessage)
			if waiting {
				if got.Status != mcp.TaskStatusInputRequired || !strings.Contains(got.StatusMessage, "fx.delete_thing") {
					t.Fatalf("a waiting task after the restart: %s %q, want input_required", got.Status, got.StatusMessage)
				}
				out, isErr := b.call("codemode_approve", map[string]any{"executionId": id})
				if isErr || out["status"] != "completed" {
					t.Fatalf("approve after the restart: %v", out)
				}
				if done := b.task(id); done.Status != mcp.TaskStatusCompleted {
					t.Errorf("task after the approval: %s", done.Status)
				}
				for name, n := range w.effects() {
					if n != 1 {
						t.Errorf("%s happened %d times, want once", name, n)
					}
				}
				return
			}
			r := w.show(id)
			if r.Status == "completed" {
				if got.Status != mcp.TaskStatusCompleted {
					t.Errorf("task of a completed run: %s", got.Status)
				}
				return
			}
			if got.Status != mcp.TaskStatusFailed || !strings.Contains(got.StatusMessage, "interrupted") || got.StatusMessage != strings.SplitN(r.Error, "\n", 2)[0] {
				t.Fatalf("task after the restart: %s %q, want failed with the recovery's reason (%q)", got.Status, got.StatusMessage, r.Error)
			}
			rollBack(t, w, b, r, checkLog(t, r, effects))
		})
	}
}
