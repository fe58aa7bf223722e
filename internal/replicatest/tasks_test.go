package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// tasks connects a second client to the replica, on protocol 2025-11-25
// (tasks as that revision has them); it is closed when the test ends.
func (r *replica) tasks() *client.Client {
	r.t.Helper()
	tr, err := transport.NewStreamableHTTP("http://" + r.addr + "/mcp")
	if err != nil {
		r.t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx, cancel := fixture.WithDeadline(r.t, context.Background())
	defer cancel()
	if err := c.Start(ctx); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-11-25"
	req.Params.ClientInfo = mcp.Implementation{Name: "replicatest", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		r.t.Fatalf("%s: initialize: %v", r.name, err)
	}
	return c
}

// createTask starts code as a task through c and returns its id.
func createTask(t *testing.T, c *client.Client, code string) string {
	t.Helper()
	resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("create-task"), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": "codemode", "arguments": map[string]any{"code": code}, "task": map[string]any{}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("create task: %v %+v", err, resp)
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("create task: %v: %s", err, resp.Result)
	}
	return created.Task.TaskId
}

func getTask(t *testing.T, c *client.Client, id string) *mcp.GetTaskResult {
	t.Helper()
	r, err := c.GetTask(context.Background(), mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	return r
}

// until polls tasks/get through c until the task is want.
func until(t *testing.T, c *client.Client, id string, want mcp.TaskStatus) *mcp.GetTaskResult {
	t.Helper()
	var r *mcp.GetTaskResult
	fixture.Until(t, fmt.Sprintf("task %s is %s", id, want), func() bool {
		r = getTask(t, c, id)
		return r.Status == want
	})
	return r
}

// A task made through replica A is polled, listed and approved through B;
// its result is read through A; its side effect happens once. Another is
// cancelled through B while A runs it: A stops it, and no call starts
// afterwards.
func TestATaskMadeOnOneIsServedByAnother(t *testing.T) {
	tm := newTeam(t)
	a, b := tm.start("A"), tm.start("B")
	ta, tb := a.tasks(), b.tasks()

	id := createTask(t, ta, pausing("task"))
	waiting := until(t, tb, id, mcp.TaskStatusInputRequired)
	if !strings.Contains(waiting.StatusMessage, "fx.delete_thing") {
		t.Errorf("input_required through B: %q", waiting.StatusMessage)
	}
	list, err := tb.ListTasks(context.Background(), mcp.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].TaskId != id {
		t.Fatalf("tasks/list through B: %+v, %v", list, err)
	}
	out, isErr := b.call("codemode_approve", map[string]any{"executionId": id})
	if isErr || out["status"] != "completed" {
		t.Fatalf("approve through B: %v", out)
	}
	until(t, ta, id, mcp.TaskStatusCompleted)
	res, err := ta.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
	if err != nil || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), `"result":"done"`) {
		t.Fatalf("tasks/result through A: %+v, %v", res, err)
	}
	if got := tm.effects(); got["task"] != 1 {
		t.Errorf("side effects %v, want task once", got)
	}

	loop := createTask(t, ta, `async () => { for (let i = 0; ; i++) { await fx.counter({ name: "loop" + i }); await new Promise(r => setTimeout(r, 50)); } }`)
	loops := func() int {
		n := 0
		for name := range tm.effects() {
			if strings.HasPrefix(name, "loop") {
				n++
			}
		}
		return n
	}
	fixture.Until(t, "A's task made 5 calls", func() bool { return loops() >= 5 })
	cancelled, err := tb.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: loop}})
	if err != nil || cancelled.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/cancel through B: %+v, %v", cancelled, err)
	}
	at := loops()
	// A reads the run's status every quarter of a second and stops the
	// pass: after that, no call starts.
	time.Sleep(time.Second) // four of A's reads
	stopped := loops()
	time.Sleep(time.Second) // twenty of the loop's turns
	r := tm.show(loop)
	t.Logf("cancelled through B at call %d; A made %d more before it stopped", at, stopped-at)
	if got := loops(); got != stopped || r.Status != "cancelled" || len(r.Log) != got {
		t.Errorf("after the cancellation: %d calls made (%d a second earlier), %d logged, run %s", got, stopped, len(r.Log), r.Status)
	}
	if stopped > at+int(500*time.Millisecond/(50*time.Millisecond)) {
		t.Errorf("A made %d calls after the cancellation, more than its quarter-second poll allows", stopped-at)
	}
	if st := getTask(t, ta, loop).Status; st != mcp.TaskStatusCancelled {
		t.Errorf("tasks/get through A: %s", st)
	}
}
