package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// TestTasks calls the fixture's task-counter as a task over stdio and
// streamable HTTP: it is listed as one, answered with a task at once,
// read, cancelled, and its result (or failure) read once it ended; the
// tool is called once per task. Over stdio mcp-go's server would speak
// 2026-07-28, on which it refuses tasks/result, so the connector speaks
// 2025-11-25 to it.
func TestTasks(t *testing.T) {
	for _, tr := range []struct {
		name   string
		config func(t *testing.T, effects string) Config
		legacy bool
	}{
		{"stdio", func(t *testing.T, effects string) Config {
			return Config{Name: "fx", Command: fixture.MCPServer(t), Args: []string{"-tasks"}, Env: map[string]string{"FIXTURE_SIDE_EFFECTS": effects}}
		}, true},
		{"http", func(t *testing.T, effects string) Config {
			return Config{Name: "fx", URL: fixture.StartTasks(t, "FIXTURE_SIDE_EFFECTS="+effects)}
		}, true}, // (mcp-go's streamable HTTP server speaks 2026-07-28 too)
	} {
		t.Run(tr.name, func(t *testing.T) {
			effects := filepath.Join(t.TempDir(), "effects")
			c := dial(t, tr.config(t, effects))
			if got := c.legacy.Load(); got != tr.legacy {
				t.Errorf("speaks 2025-11-25 only: %v, want %v", got, tr.legacy)
			}
			tools, err := c.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools {
				if want := tool.SourceName == "task-counter"; tool.Task != want {
					t.Errorf("tool %s: Task = %v, want %v", tool.SourceName, tool.Task, want)
				}
			}
			ctx := context.Background()
			start := func(args string) string {
				t.Helper()
				st, err := c.StartTask(ctx, "task-counter", json.RawMessage(args))
				if err != nil {
					t.Fatal(err)
				}
				if st.ID == "" || st.Result != nil {
					t.Fatalf("StartTask = %+v, want a task", st)
				}
				return st.ID
			}

			// A long task works until it is cancelled.
			long := start(`{"name":"long","ms":600000}`)
			if st, err := c.PollTask(ctx, long); err != nil || st.Ended || st.Status != "working" {
				t.Errorf("PollTask of a working task = %+v, %v", st, err)
			}
			if err := c.CancelTask(ctx, long); err != nil {
				t.Fatal(err)
			}
			if st, err := c.PollTask(ctx, long); err != nil || !st.Ended || st.Status != "cancelled" {
				t.Errorf("PollTask of a cancelled task = %+v, %v", st, err)
			}
			if err := c.CancelTask(ctx, long); err != nil {
				t.Errorf("cancelling an ended task: %v", err)
			}
			res, err := c.TaskResult(ctx, long)
			if err != nil || !res.IsError || !strings.Contains(res.Message, "the task was cancelled") {
				t.Errorf("TaskResult of a cancelled task = %+v, %v", res, err)
			}

			// A quick one's result (tasks/result waits for it).
			quick := start(`{"name":"quick","ms":1}`)
			res, err = c.TaskResult(ctx, quick)
			if err != nil || res.IsError || string(res.Value) != "1" {
				t.Errorf("TaskResult = %+v %s, %v; want 1", res, res.Value, err)
			}
			if st, err := c.PollTask(ctx, quick); err != nil || !st.Ended || st.Status != "completed" {
				t.Errorf("PollTask of a completed task = %+v, %v", st, err)
			}

			failing := start(`{"name":"failing","ms":1,"fail":true}`)
			res, err = c.TaskResult(ctx, failing)
			if err != nil || !res.IsError || !strings.Contains(res.Message, "failed as asked") {
				t.Errorf("TaskResult of a failed task = %+v, %v", res, err)
			}

			_, err = c.PollTask(ctx, "no-such-task")
			if !errors.Is(err, connectors.ErrUnknownTask) {
				t.Errorf("PollTask of an unknown task: %v, want ErrUnknownTask", err)
			}
			if _, err := c.TaskResult(ctx, "no-such-task"); !errors.Is(err, connectors.ErrUnknownTask) {
				t.Errorf("TaskResult of an unknown task: %v, want ErrUnknownTask", err)
			}
			net, _ := fixture.SideEffects(t, effects)
			if net["long"] != 1 || net["quick"] != 1 || net["failing"] != 1 {
				t.Errorf("side effects = %v, want each task's tool called once", net)
			}
		})
	}
}

// TestTasksOfAStdioServerStartedAgain: a stdio server that exits takes
// its tasks with it; the one started in its place does not know them.
func TestTasksOfAStdioServerStartedAgain(t *testing.T) {
	effects := filepath.Join(t.TempDir(), "effects")
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), Args: []string{"-tasks"}, Env: map[string]string{"FIXTURE_SIDE_EFFECTS": effects}})
	ctx := context.Background()
	st, err := c.StartTask(ctx, "task-counter", json.RawMessage(`{"name":"lost","ms":600000}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "crash", nil); err == nil {
		t.Fatal("the crash tool returned")
	}
	if _, err := c.PollTask(ctx, st.ID); !errors.Is(err, connectors.ErrUnknownTask) {
		t.Errorf("PollTask after the server was started again: %v, want ErrUnknownTask", err)
	}
}
