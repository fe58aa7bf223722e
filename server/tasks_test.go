package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/server"
)

// stdioClient serves s over stdio on pipes and connects mcp-go's client to
// it (protocol 2025-11-25, declaring caps); everything is closed, and the
// server awaited, when the test ends.
func stdioClient(t *testing.T, s *server.Server, caps mcp.ClientCapabilities, opts ...client.ClientOption) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, inR, outW) }()
	c := client.NewClient(transport.NewIO(outR, inW, nil), opts...)
	t.Cleanup(func() {
		inW.Close() // the server reads EOF and returns
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		cancel()
		outW.Close()
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	init.Params.Capabilities = caps
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// httpClient serves s over streamable HTTP and connects mcp-go's client to
// it (protocol 2025-11-25, with a GET stream for what the server sends
// outside a request).
func httpClient(t *testing.T, s *server.Server, caps mcp.ClientCapabilities, opts ...client.ClientOption) *client.Client {
	t.Helper()
	base := serve(t, s, server.TransportHTTP)
	tr, err := transport.NewStreamableHTTP(base+server.PathMCP, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	return start(t, client.NewClient(tr, opts...), caps)
}

// createTask sends a task-augmented codemode call and returns its task.
func createTask(t *testing.T, c *client.Client, code string, extra ...map[string]any) mcp.Task {
	t.Helper()
	params := map[string]any{"name": "codemode", "arguments": map[string]any{"code": code}, "task": map[string]any{"ttl": 600000}}
	for _, e := range extra {
		for k, v := range e {
			params[k] = v
		}
	}
	res := rawRequest(t, c, "tools/call", params)
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("CreateTaskResult: %v: %s", err, res)
	}
	return created.Task
}

var rawIDs struct {
	sync.Mutex
	n int
}

// rawRequest sends a request the client has no method for and returns its
// result; a JSON-RPC error fails the test.
func rawRequest(t *testing.T, c *client.Client, method string, params any) json.RawMessage {
	t.Helper()
	res, err := rawCall(c, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}

func rawCall(c *client.Client, method string, params any) (json.RawMessage, error) {
	rawIDs.Lock()
	rawIDs.n++
	id := fmt.Sprintf("raw-%d", rawIDs.n)
	rawIDs.Unlock()
	resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: method, Params: params,
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Message)
	}
	return resp.Result, nil
}

func getTask(t *testing.T, c *client.Client, id string) *mcp.GetTaskResult {
	t.Helper()
	r, err := c.GetTask(context.Background(), mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	return r
}

// pollUntil polls tasks/get until the task's status is want.
func pollUntil(t *testing.T, c *client.Client, id string, want mcp.TaskStatus) *mcp.GetTaskResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := getTask(t, c, id)
		if r.Status == want {
			return r
		}
		if r.Status.IsTerminal() || time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%s), want %s", id, r.Status, r.StatusMessage, want)
		}
		time.Sleep(20 * time.Millisecond) // a client's poll, not synchronisation: the next tasks/get reads the store
	}
}

func taskResult(t *testing.T, c *client.Client, id string) (map[string]any, bool) {
	t.Helper()
	r, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
	if err != nil {
		t.Fatalf("tasks/result %s: %v", id, err)
	}
	if r.Meta == nil || fmt.Sprint(r.Meta.AdditionalFields[mcp.RelatedTaskMetaKey]) != fmt.Sprint(map[string]any{"taskId": id}) {
		t.Errorf("tasks/result _meta = %+v, want the related task", r.Meta)
	}
	if len(r.Content) != 1 {
		t.Fatalf("tasks/result: want one text content, got %d", len(r.Content))
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].(mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out, r.IsError
}

// statusNotes collects the notifications/tasks/status a client receives.
type statusNotes struct {
	mu   sync.Mutex
	seen map[string][]string // task id: statuses in order
	ch   chan struct{}
}

func listenStatus(c *client.Client) *statusNotes {
	n := &statusNotes{seen: map[string][]string{}, ch: make(chan struct{}, 64)}
	c.OnNotification(func(m mcp.JSONRPCNotification) {
		if m.Method != string(mcp.MethodNotificationTasksStatus) {
			return
		}
		n.mu.Lock()
		id, _ := m.Params.AdditionalFields["taskId"].(string)
		st, _ := m.Params.AdditionalFields["status"].(string)
		n.seen[id] = append(n.seen[id], st)
		n.mu.Unlock()
		n.ch <- struct{}{}
	})
	return n
}

// waitFor returns once task id was reported in status st.
func (n *statusNotes) waitFor(t *testing.T, id, st string) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		n.mu.Lock()
		got := append([]string(nil), n.seen[id]...)
		n.mu.Unlock()
		for _, s := range got {
			if s == st {
				return got
			}
		}
		select {
		case <-n.ch:
		case <-timeout:
			t.Fatalf("no notifications/tasks/status %s for %s; got %v", st, id, got)
		}
	}
}

func withoutID(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "executionId" {
			out[k] = v
		}
	}
	return out
}

func TestTasksAreDeclared(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *server.Server) *client.Client{
		"stdio": func(t *testing.T, s *server.Server) *client.Client { return stdioClient(t, s, mcp.ClientCapabilities{}) },
		"http":  func(t *testing.T, s *server.Server) *client.Client { return httpClient(t, s, mcp.ClientCapabilities{}) },
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, newServer(t, false))
			caps := c.GetServerCapabilities().Tasks
			if caps == nil || caps.List == nil || caps.Cancel == nil || caps.Requests == nil || caps.Requests.Tools == nil || caps.Requests.Tools.Call == nil {
				t.Errorf("tasks capability = %+v, want list, cancel and requests.tools.call", caps)
			}
			tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				want := tool.Name == "codemode"
				if got := tool.Execution != nil && tool.Execution.TaskSupport == mcp.TaskSupportOptional; got != want {
					t.Errorf("%s: taskSupport optional = %v, want %v", tool.Name, got, want)
				}
			}
		})
	}
	t.Run("not in process", func(t *testing.T) {
		// An in-process client reaches mcp-go directly: no tasks are
		// declared, and a task-augmented call runs as a plain one.
		c := connect(t, newServer(t, false), nil)
		if c.GetServerCapabilities().Tasks != nil {
			t.Error("tasks declared to an in-process client")
		}
		res := rawRequest(t, c, "tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": "6 * 7"}, "task": map[string]any{}})
		if !strings.Contains(string(res), `"result":42`) {
			t.Errorf("task-augmented call in process: %s, want the plain call's outcome", res)
		}
	})
}

func TestATaskRunsAndGivesThePlainCallsOutcome(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *server.Server, mcp.ClientCapabilities, ...client.ClientOption) *client.Client{
		"stdio": stdioClient,
		"http":  httpClient,
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, newServer(t, false), mcp.ClientCapabilities{})
			notes := listenStatus(c)
			const code = `await new Promise(r => setTimeout(r, 300)); console.log("slept"); return { answer: 42 }`
			began := time.Now()
			task := createTask(t, c, code)
			if took := time.Since(began); took > 250*time.Millisecond {
				t.Errorf("the task came after %v, before the program could have ended?", took)
			}
			if task.Status != mcp.TaskStatusWorking || !strings.HasPrefix(task.TaskId, "exec_") {
				t.Errorf("created task = %+v, want working with the run's id", task)
			}
			if task.TTL == nil || *task.TTL != 600000 || task.PollInterval == nil || *task.PollInterval != 1000 {
				t.Errorf("ttl %v, pollInterval %v: want the requested 600000 and the 1000 hint", task.TTL, task.PollInterval)
			}
			if got := getTask(t, c, task.TaskId); got.Status != mcp.TaskStatusWorking {
				t.Errorf("tasks/get while it runs: %s", got.Status)
			}
			got, isErr := taskResult(t, c, task.TaskId) // blocks until it ends
			if done := getTask(t, c, task.TaskId); done.Status != mcp.TaskStatusCompleted {
				t.Errorf("after tasks/result: %s", done.Status)
			}
			plain, plainErr := call(t, c, "codemode", map[string]any{"code": code})
			if diff := cmp.Diff(withoutID(plain), withoutID(got)); diff != "" || isErr != plainErr {
				t.Errorf("tasks/result differs from the plain call (-plain +task):\n%s", diff)
			}
			if got["executionId"] != task.TaskId {
				t.Errorf("outcome of execution %v, want %s", got["executionId"], task.TaskId)
			}
			if seen := notes.waitFor(t, task.TaskId, "completed"); seen[len(seen)-1] != "completed" {
				t.Errorf("status notifications %v", seen)
			}
			list, err := c.ListTasks(context.Background(), mcp.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tasks) != 1 || list.Tasks[0].TaskId != task.TaskId || list.Tasks[0].Status != mcp.TaskStatusCompleted {
				t.Errorf("tasks/list = %+v, want the one task, completed", list.Tasks)
			}
		})
	}
}

func TestAFailedTaskGivesTheErrorAndItsReason(t *testing.T) {
	c := stdioClient(t, newServer(t, false), mcp.ClientCapabilities{})
	task := createTask(t, c, `throw new Error("boom")`)
	got, isErr := taskResult(t, c, task.TaskId)
	if !isErr || got["status"] != "error" || !strings.Contains(fmt.Sprint(got["error"]), "boom") {
		t.Errorf("tasks/result = %v (isError %v), want the error outcome", got, isErr)
	}
	if r := getTask(t, c, task.TaskId); r.Status != mcp.TaskStatusFailed || !strings.Contains(r.StatusMessage, "boom") {
		t.Errorf("tasks/get = %s %q, want failed with the reason", r.Status, r.StatusMessage)
	}
}

func TestTaskRequestsThatAreRefused(t *testing.T) {
	c := stdioClient(t, newServer(t, false), mcp.ClientCapabilities{})
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"tasks/get", map[string]any{"taskId": "exec_0000000000000000"}, "-32602: Failed to retrieve task: task not found"},
		{"tasks/get", map[string]any{}, "-32602: invalid params of tasks/get: taskId is required"},
		{"tasks/result", map[string]any{"taskId": "nope"}, "-32602: Failed to retrieve task: task not found"},
		{"tasks/cancel", map[string]any{"taskId": "nope"}, "-32602: Failed to retrieve task: task not found"},
		{"tasks/list", map[string]any{"cursor": "x"}, `-32602: invalid cursor "x"`},
		{"tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": 7}, "task": map[string]any{}}, "-32602: invalid arguments for codemode:\n- at /code: got number, want string"},
		{"tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": strings.Repeat("x", 2<<20)}, "task": map[string]any{}}, "-32602: the program was refused; nothing was run: code is too large"},
	} {
		_, err := rawCall(c, tc.method, tc.params)
		if err == nil || !strings.Contains(strings.Replace(err.Error(), "JSON-RPC error ", "", 1), tc.want) {
			t.Errorf("%s %v: %v, want %s", tc.method, tc.params, err, tc.want)
		}
	}
	// A plain call's run is no task.
	out, _ := call(t, c, "codemode", map[string]any{"code": "1"})
	if _, err := rawCall(c, "tasks/get", map[string]any{"taskId": out["executionId"]}); err == nil || !strings.Contains(err.Error(), "task not found") {
		t.Errorf("tasks/get of a plain call's run: %v", err)
	}
}
