package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// stdioClient serves s over stdio on pipes and connects mcp-go's client to
// it (protocol 2025-11-25, declaring caps); everything is closed, and the
// server awaited, when the test ends.
func stdioClient(t *testing.T, s *server.Server, caps mcp.ClientCapabilities, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return stdioClientReading(t, s, caps, nil, opts...)
}

// stdioClientReading is stdioClient whose client reads what the server
// writes through read(the server's output), unless read is nil.
func stdioClientReading(t *testing.T, s *server.Server, caps mcp.ClientCapabilities, read func(io.Reader) io.Reader, opts ...client.ClientOption) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, inR, outW) }()
	var out io.Reader = outR
	if read != nil {
		out = read(outR)
	}
	c := client.NewClient(transport.NewIO(out, inW, nil), opts...)
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
	var r *mcp.GetTaskResult
	fixture.Until(t, fmt.Sprintf("task %s is %s", id, want), func() bool {
		r = getTask(t, c, id)
		if r.Status != want && r.Status.IsTerminal() {
			t.Fatalf("task %s is %s (%s), want %s", id, r.Status, r.StatusMessage, want)
		}
		return r.Status == want
	})
	return r
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
	for {
		n.mu.Lock()
		got := append([]string(nil), n.seen[id]...)
		n.mu.Unlock()
		if slices.Contains(got, st) {
			return got
		}
		fixture.Wait(t, fmt.Sprintf("notifications/tasks/status %s for %s (got %v)", st, id, got), n.ch)
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
		"stdio": func(t *testing.T, s *server.Server) *client.Client {
			return stdioClient(t, s, mcp.ClientCapabilities{})
		},
		"http": func(t *testing.T, s *server.Server) *client.Client { return httpClient(t, s, mcp.ClientCapabilities{}) },
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
			// The task comes while its program works (it sleeps 300 ms): it
			// is working, and so is it when read next.
			task := createTask(t, c, code)
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
		{"tasks/list", map[string]any{"cursor": "x"}, `-32602: invalid cursor "x": not a cursor this server gave`},
		{"tasks/list", map[string]any{"cursor": "50"}, `-32602: invalid cursor "50": not a cursor this server gave`}, // an offset, as servers before gave
		{"tasks/list", map[string]any{"cursor": "1764300000000000000.exec_\x00"}, `-32602: invalid cursor "1764300000000000000.exec_\x00": not a cursor this server gave`},
		{"tasks/list", map[string]any{"cursor": "1764300000000000000."}, `-32602: invalid cursor "1764300000000000000.": not a cursor this server gave`},
		{"tasks/list", map[string]any{"cursor": strings.Repeat("9", 1<<20) + ".exec_1"}, `…": 1048583 bytes, more than a cursor this server gives (128)`},
		{"tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": 7}, "task": map[string]any{}}, "-32602: invalid arguments for codemode:\n- at /code: got number, want string"},
		{"tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": strings.Repeat("x", 2<<20)}, "task": map[string]any{}}, "-32602: the program was refused; nothing was run: code is too large"},
	} {
		_, err := rawCall(c, tc.method, tc.params)
		if err == nil || !strings.Contains(strings.Replace(err.Error(), "JSON-RPC error ", "", 1), tc.want) || len(err.Error()) > 1024 {
			t.Errorf("%s %.200v: %.1100v, want %s", tc.method, tc.params, err, tc.want)
		}
	}
	// A plain call's run is no task.
	out, _ := call(t, c, "codemode", map[string]any{"code": "1"})
	if _, err := rawCall(c, "tasks/get", map[string]any{"taskId": out["executionId"]}); err == nil || !strings.Contains(err.Error(), "task not found") {
		t.Errorf("tasks/get of a plain call's run: %v", err)
	}
}

// answering is an elicitation handler that answers action and records
// what it was asked.
type answering struct {
	mu     sync.Mutex
	action mcp.ElicitationResponseAction
	asked  []mcp.ElicitationParams
	told   chan struct{} // if not nil, told of each question (without blocking)
}

func (a *answering) handle(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Params)
	select {
	case a.told <- struct{}{}:
	default:
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a.action}}, nil
}

func (a *answering) questions() []mcp.ElicitationParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]mcp.ElicitationParams(nil), a.asked...)
}

func TestATaskThatWaitsIsAnsweredThroughElicitation(t *testing.T) {
	elicit := mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	for _, tc := range []struct {
		transport string
		action    mcp.ElicitationResponseAction
		status    mcp.TaskStatus
		outcome   string
	}{
		{"stdio", mcp.ElicitationResponseActionAccept, mcp.TaskStatusCompleted, "completed"},
		{"http", mcp.ElicitationResponseActionAccept, mcp.TaskStatusCompleted, "completed"},
		{"stdio", mcp.ElicitationResponseActionDecline, mcp.TaskStatusFailed, "rejected"},
	} {
		t.Run(tc.transport+" "+string(tc.action), func(t *testing.T) {
			a := &answering{action: tc.action}
			s := newServer(t, true)
			var c *client.Client
			if tc.transport == "stdio" {
				c = stdioClient(t, s, elicit, client.WithElicitationHandler(elicitFunc(a.handle)))
			} else {
				c = httpClient(t, s, elicit, client.WithElicitationHandler(elicitFunc(a.handle)))
			}
			notes := listenStatus(c)
			task := createTask(t, c, `const n = await notes.createNote({ text: "from a task" }); return n.text`)
			waiting := pollUntil(t, c, task.TaskId, mcp.TaskStatusInputRequired)
			if !strings.Contains(waiting.StatusMessage, `call 1 awaits approval: notes.createNote({"text":"from a task"})`) {
				t.Errorf("input_required message %q, want the pending action", waiting.StatusMessage)
			}
			// The notification of a status comes while the task is in it;
			// one that changes again before the follower looks is told
			// only as the newer status (notifications are a courtesy;
			// tasks/get is how a client learns), so wait for it here.
			notes.waitFor(t, task.TaskId, "input_required")
			if len(a.questions()) != 0 {
				t.Fatal("asked before tasks/result: the task's pass runs without the client")
			}
			got, _ := taskResult(t, c, task.TaskId)
			if got["status"] != tc.outcome {
				t.Fatalf("outcome %v, want %s", got, tc.outcome)
			}
			if tc.outcome == "completed" && got["result"] != "from a task" {
				t.Errorf("result %v", got["result"])
			}
			qs := a.questions()
			if len(qs) != 1 || !strings.Contains(qs[0].Message, "Approve notes.createNote (execution "+task.TaskId+", call 1)?") ||
				!strings.Contains(qs[0].Message, `"text": "from a task"`) {
				t.Fatalf("asked %+v, want the pending action as the codemode call's elicitation shows it", qs)
			}
			if rel := qs[0].Meta; rel == nil || fmt.Sprint(rel.AdditionalFields[mcp.RelatedTaskMetaKey]) != fmt.Sprint(map[string]any{"taskId": task.TaskId}) {
				t.Errorf("elicitation _meta %+v, want the related task", rel)
			}
			if r := getTask(t, c, task.TaskId); r.Status != tc.status {
				t.Errorf("task %s, want %s", r.Status, tc.status)
			}
			notes.waitFor(t, task.TaskId, string(tc.status))
			list, _ := call(t, c, "codemode", map[string]any{"code": `(await notes.listNotes({})).notes.length`})
			want := 0.0
			if tc.outcome == "completed" {
				want = 1
			}
			if list["result"] != want {
				t.Errorf("notes after the task: %v, want %v (the side effect once)", list["result"], want)
			}
		})
	}
}

func TestATaskIsNotApprovedWithArgumentsTooLongToShow(t *testing.T) {
	a := &answering{action: mcp.ElicitationResponseActionAccept, told: make(chan struct{}, 1)}
	s := newServer(t, true)
	c := stdioClient(t, s, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, client.WithElicitationHandler(elicitFunc(a.handle)))
	task := createTask(t, c, `await notes.createNote({ text: "é".repeat(5000) })`)
	pollUntil(t, c, task.TaskId, mcp.TaskStatusInputRequired)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
		done <- err
	}()
	fixture.Wait(t, "the client being asked", a.told)
	if qs := a.questions(); len(qs) != 1 || !strings.Contains(qs[0].Message, "Accepting here does not approve them") {
		t.Fatalf("asked %+v", qs)
	}
	if r := getTask(t, c, task.TaskId); r.Status != mcp.TaskStatusInputRequired {
		t.Errorf("after accepting arguments not shown whole: %s, want input_required", r.Status)
	}
	// tasks/result still waits: a decision made elsewhere ends it.
	if _, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "codemode_reject", Arguments: map[string]any{"executionId": task.TaskId}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("tasks/result: %v", err)
	}
	cancel()
	if r := getTask(t, c, task.TaskId); r.Status != mcp.TaskStatusFailed || !strings.Contains(r.StatusMessage, "rejected") {
		t.Errorf("after codemode_reject: %s %q", r.Status, r.StatusMessage)
	}
}

func TestATaskIsCancelled(t *testing.T) {
	c := stdioClient(t, newServer(t, false), mcp.ClientCapabilities{})
	running := createTask(t, c, `await new Promise(r => setTimeout(r, 60000)); await notes.createNote({ text: "never" })`)
	res, err := c.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: running.TaskId}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != mcp.TaskStatusCancelled {
		t.Errorf("tasks/cancel answered %s, want cancelled", res.Status)
	}
	if r := getTask(t, c, running.TaskId); r.Status != mcp.TaskStatusCancelled {
		t.Errorf("tasks/get after cancel: %s", r.Status)
	}
	if _, err := rawCall(c, "tasks/cancel", map[string]any{"taskId": running.TaskId}); err == nil || !strings.Contains(err.Error(), "-32602: Cannot cancel task: already in terminal status 'cancelled'") {
		t.Errorf("second tasks/cancel: %v", err)
	}
	got, _ := taskResult(t, c, running.TaskId)
	if got["status"] != "cancelled" || got["error"] != "cancelled by the client (tasks/cancel)" {
		t.Errorf("tasks/result of a cancelled task: %v", got)
	}

	waiting := createTask(t, c, `await notes.createNote({ text: "x" })`)
	pollUntil(t, c, waiting.TaskId, mcp.TaskStatusInputRequired)
	if res, err := c.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: waiting.TaskId}}); err != nil || res.Status != mcp.TaskStatusCancelled {
		t.Errorf("cancel an input_required task: %+v, %v", res, err)
	}
	pending, _ := call(t, c, "codemode_pending", map[string]any{})
	if p, _ := pending["pending"].([]any); len(p) != 0 {
		t.Errorf("pending after cancelling: %v", p)
	}
}

// modern sends a 2026-07-28 request over streamable HTTP (no session),
// declaring the tasks extension unless bare, and returns its result or
// error object.
func modern(t *testing.T, base, method string, params map[string]any, bare bool) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	caps := map[string]any{}
	if !bare {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}}
	for k, v := range params {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": p})
	resp := req{method: "POST", path: server.PathMCP, body: string(body),
		header: jsonHeaders("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method)}.do(t, nil, base)
	var msg struct {
		ID     int            `json:"id"`
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.ID != 7 {
		t.Fatalf("%s: %d %v (id %d)", method, resp.StatusCode, err, msg.ID)
	}
	return msg.Result, msg.Error
}

// modernUntil polls tasks/get until the task's status is want.
func modernUntil(t *testing.T, base, id, want string) map[string]any {
	t.Helper()
	var got map[string]any
	fixture.Until(t, fmt.Sprintf("task %s is %s", id, want), func() bool {
		var rpcErr map[string]any
		got, rpcErr = modern(t, base, "tasks/get", map[string]any{"taskId": id}, false)
		if rpcErr != nil {
			t.Fatalf("tasks/get: %v", rpcErr)
		}
		return got["status"] == want
	})
	return got
}

func TestTasksOfTheExtension(t *testing.T) {
	base := serve(t, newServer(t, true), server.TransportHTTP)
	call := func(t *testing.T, code string) map[string]any {
		t.Helper()
		res, rpcErr := modern(t, base, "tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": code}}, false)
		if rpcErr != nil || res["resultType"] != "task" || res["status"] != "working" || res["ttlMs"] == nil || res["pollIntervalMs"] != 1000.0 {
			t.Fatalf("tools/call: %v %v, want a task (resultType task, working, ttlMs, pollIntervalMs)", res, rpcErr)
		}
		return res
	}

	t.Run("input requests answered by tasks/update", func(t *testing.T) {
		task := call(t, `(await notes.createNote({ text: "through tasks/update" })).text`)
		id := task["taskId"].(string)
		got := modernUntil(t, base, id, "input_required")
		reqs, _ := got["inputRequests"].(map[string]any)
		if len(reqs) != 1 {
			t.Fatalf("inputRequests = %v, want one question", got["inputRequests"])
		}
		var key string
		var q map[string]any
		for k, v := range reqs {
			key, q = k, v.(map[string]any)
		}
		params, _ := q["params"].(map[string]any)
		if q["method"] != "elicitation/create" || !strings.Contains(fmt.Sprint(params["message"]), "Approve notes.createNote (execution "+id+", call 1)?") {
			t.Errorf("input request %v", q)
		}
		if ack, rpcErr := modern(t, base, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"not-asked": map[string]any{"action": "accept"}}}, false); rpcErr != nil || ack["resultType"] != "complete" {
			t.Fatalf("tasks/update with an unknown key: %v %v", ack, rpcErr)
		}
		if still := modernUntil(t, base, id, "input_required"); still["inputRequests"] == nil {
			t.Error("an answer to a key not asked changed the task")
		}
		if ack, rpcErr := modern(t, base, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{}}}}, false); rpcErr != nil || ack["resultType"] != "complete" {
			t.Fatalf("tasks/update: %v %v", ack, rpcErr)
		}
		done := modernUntil(t, base, id, "completed")
		res, _ := done["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		if sc["status"] != "completed" || sc["result"] != "through tasks/update" || sc["executionId"] != id {
			t.Errorf("result %v", res)
		}
	})
	t.Run("a failed program completes with its error", func(t *testing.T) {
		id := call(t, `throw new Error("nope")`)["taskId"].(string)
		done := modernUntil(t, base, id, "completed")
		res, _ := done["result"].(map[string]any)
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["structuredContent"]), "nope") {
			t.Errorf("result %v, want the error outcome, isError", res)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		id := call(t, `await new Promise(r => setTimeout(r, 60000))`)["taskId"].(string)
		if ack, rpcErr := modern(t, base, "tasks/cancel", map[string]any{"taskId": id}, false); rpcErr != nil || ack["resultType"] != "complete" {
			t.Fatalf("tasks/cancel: %v %v", ack, rpcErr)
		}
		modernUntil(t, base, id, "cancelled")
	})
	t.Run("refused without the extension", func(t *testing.T) {
		_, rpcErr := modern(t, base, "tasks/get", map[string]any{"taskId": "exec_1"}, true)
		if rpcErr == nil || rpcErr["code"] != -32021.0 {
			t.Errorf("tasks/get without the extension: %v, want -32021", rpcErr)
		}
	})
}

// pendingReads is the real engine, counting the reads of a run's pending
// actions.
type pendingReads struct {
	server.Engine
	n atomic.Int64
}

func (p *pendingReads) wrap(e server.Engine) { p.Engine = e }

func (p *pendingReads) Pending(ctx context.Context, id string) ([]codemode.PendingAction, error) {
	defer p.n.Add(1)
	return p.Engine.Pending(ctx, id)
}

// counting counts the occurrences of s in what is read through it.
type counting struct {
	io.Reader
	s    []byte
	tail []byte // the last len(s)-1 bytes read: the head of an occurrence read next
	n    atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	seen := append(c.tail, p[:n]...)
	c.n.Add(int64(bytes.Count(seen, c.s)))
	c.tail = append([]byte(nil), seen[max(0, len(seen)-len(c.s)+1):]...)
	return n, err
}

// Two tasks/result requests for one paused task, at once (a client's
// second, or one sent again after the first timed out), put the question
// to the person once: the second waits for the first's question, here
// answered, approving the run, rather than asking again.
func TestAPausedTaskIsAskedAboutOnce(t *testing.T) {
	release := make(chan struct{})
	asked := make(chan struct{}, 8)
	hold := func(ctx context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		asked <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
	}
	reads := &pendingReads{}
	s := newServerWith(t, server.Options{Elicitation: true, Runtime: reads})
	questions := &counting{s: []byte(`"method":"elicitation/create"`)}
	c := stdioClientReading(t, s, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		func(r io.Reader) io.Reader { questions.Reader = r; return questions }, client.WithElicitationHandler(elicitFunc(hold)))
	notes := listenStatus(c)
	task := createTask(t, c, `(await notes.createNote({ text: "asked once" })).text`)
	notes.waitFor(t, task.TaskId, "input_required") // the follower has read the pause: from here only tasks/result does
	results := make(chan error, 2)
	result := func() {
		go func() {
			r, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
			if err == nil && (len(r.Content) != 1 || !strings.Contains(r.Content[0].(mcp.TextContent).Text, `"status":"completed"`)) {
				err = fmt.Errorf("result %+v, want the run completed", r.Content)
			}
			results <- err
		}()
	}
	result()
	fixture.Wait(t, "the question of the first tasks/result", asked)
	before := reads.n.Load()
	result()
	fixture.Until(t, "the second tasks/result reading what the task waits for", func() bool { return reads.n.Load() > before })
	close(release)
	for range 2 {
		if err := fixture.Wait(t, "tasks/result", results); err != nil {
			t.Errorf("tasks/result: %v", err)
		}
	}
	if n := questions.n.Load(); n != 1 {
		t.Errorf("the person was asked %d times about one pause, want once", n)
	}
}

func TestTaskResultEndsWhenTheTaskIsDecidedElsewhere(t *testing.T) {
	// The client is asked, and never answers; an approval made elsewhere
	// ends the question and the wait of tasks/result.
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	never := func(ctx context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		asked <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("no answer")
	}
	c := httpClient(t, newServer(t, true), mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, client.WithElicitationHandler(elicitFunc(never)))
	t.Cleanup(func() { close(release) })
	task := createTask(t, c, `(await notes.createNote({ text: "decided elsewhere" })).text`)
	pollUntil(t, c, task.TaskId, mcp.TaskStatusInputRequired)
	done := make(chan map[string]any, 1)
	go func() {
		r, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
		if err != nil {
			t.Errorf("tasks/result: %v", err)
			done <- nil
			return
		}
		var out map[string]any
		_ = json.Unmarshal([]byte(r.Content[0].(mcp.TextContent).Text), &out)
		done <- out
	}()
	<-asked
	if out, _ := call(t, c, "codemode_approve", map[string]any{"executionId": task.TaskId}); out["status"] != "completed" {
		t.Fatalf("codemode_approve: %v", out)
	}
	if out := fixture.Wait(t, "tasks/result after the task was approved elsewhere", done); out["status"] != "completed" || out["result"] != "decided elsewhere" {
		t.Errorf("tasks/result after an approval elsewhere: %v", out)
	}
}

func TestTheExtensionAsksNothingWithoutElicitation(t *testing.T) {
	base := serve(t, newServer(t, false), server.TransportHTTP) // approvals.elicitation: false
	task, _ := modern(t, base, "tools/call", map[string]any{"name": "codemode", "arguments": map[string]any{"code": `await notes.createNote({ text: "x" })`}}, false)
	id := task["taskId"].(string)
	got := modernUntil(t, base, id, "input_required")
	if reqs, _ := got["inputRequests"].(map[string]any); len(reqs) != 0 {
		t.Fatalf("inputRequests %v with elicitation off", reqs)
	}
	_, rpcErr := modern(t, base, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1-000000000000": map[string]any{"action": "accept"}}}, false)
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	if still := modernUntil(t, base, id, "input_required"); still["status"] != "input_required" {
		t.Errorf("after an answer nobody was asked: %v", still["status"])
	}
}

// listRecorder is the real engine, recording the most runs one
// Executions read returned.
type listRecorder struct {
	server.Engine
	mu   sync.Mutex
	most int
}

func (l *listRecorder) wrap(e server.Engine) { l.Engine = e }

func (l *listRecorder) Executions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	runs, err := l.Engine.Executions(ctx, f)
	l.mu.Lock()
	l.most = max(l.most, len(runs))
	l.mu.Unlock()
	return runs, err
}

// tasks/list reads a page from the store, not every task there is: over
// 110 tasks (every tenth past its TTL) and a run that is no task, the
// pages list each live task once, newest first, and no read returns
// more than a page and one.
func TestTasksListReadsAPageAtATime(t *testing.T) {
	const runs = 110
	base := time.Now().Add(-3 * time.Hour)
	var want []string
	rec := &listRecorder{}
	s := newServerRT(t, server.Options{Runtime: rec}, 0, func(st *sqlite.Store, _ *notes.Notes) {
		for i := range runs + 1 {
			e := &codemode.Execution{ID: fmt.Sprintf("task-%03d", i), Code: "1", Status: codemode.StatusCompleted,
				Task: &codemode.Task{TTL: 24 * time.Hour}, CreatedAt: base.Add(time.Duration(i) * time.Second)}
			switch {
			case i == runs:
				e.ID, e.Task = "not-a-task", nil
			case i%10 == 0:
				e.Task.TTL = time.Minute // expired
			default:
				want = append([]string{e.ID}, want...)
			}
			e.UpdatedAt = e.CreatedAt
			if err := st.CreateExecution(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
	})
	c := httpClient(t, s, mcp.ClientCapabilities{})
	var got []string
	var cursor mcp.Cursor
	for pages := 0; ; pages++ {
		if pages > runs {
			t.Fatalf("tasks/list never ends: cursor %q", cursor)
		}
		req := mcp.ListTasksRequest{}
		req.Params.Cursor = cursor
		list, err := c.ListTasksByPage(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range list.Tasks {
			got = append(got, task.TaskId)
		}
		if cursor = list.NextCursor; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks listed (-want +got):\n%s", diff)
	}
	if rec.most > server.TaskListPage+1 {
		t.Errorf("a tasks/list read %d runs from the store; want at most a page (%d) and one", rec.most, server.TaskListPage)
	}
}

// A line on stdin is a message bounded as an HTTP body is
// (server.max_body): a longer one is refused at once with an Invalid
// Request error, before its newline comes (a client writing without one
// does not fill the memory), and skipped; the session goes on.
func TestStdioRefusesALineOverMaxBody(t *testing.T) {
	const maxBody = 1 << 16
	s := newServerWith(t, server.Options{HTTP: config.HTTP{MaxBody: maxBody}})
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(t.Context(), inR, outW) }()
	defer func() {
		inW.Close() // the server reads EOF and returns
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		inR.Close()
		outW.Close()
		outR.Close()
	}()
	out := bufio.NewReader(outR)
	next := func() map[string]any {
		t.Helper()
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the server's output: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		return m
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": float64(-32600),
		"message": "Invalid Request: the message exceeds 65536 bytes (server.max_body) and was not read"}}

	// A ping padded past the bound, with its newline: refused, not answered.
	send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", maxBody) + "\"}}\n")
	if got := next(); !cmp.Equal(got, want) {
		t.Errorf("a line over max_body:\n%v\nwant\n%v", got, want)
	}
	// Past the bound and no newline yet: refused at once.
	send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("y", 2*maxBody))
	if got := next(); !cmp.Equal(got, want) {
		t.Errorf("a line over max_body, without its newline:\n%v\nwant\n%v", got, want)
	}
	// Its end is skipped; the next line is read, up to the bound.
	send(strings.Repeat("y", maxBody) + "\"}}\n")
	send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("z", maxBody-70) + "\"}}\n")
	if got := next(); !cmp.Equal(got, map[string]any{"jsonrpc": "2.0", "id": float64(3), "result": map[string]any{}}) {
		t.Errorf("the ping after the long lines: %v", got)
	}
}

// A task created between two pages of tasks/list (the newest, so listed
// before the page read) does not push the last task of the page before
// onto the next: every task there was when the list began is listed
// exactly once, newest first.
func TestTasksListedByPageOnceWhileOneIsCreated(t *testing.T) {
	base := time.Now().Add(-time.Hour)
	var st *sqlite.Store
	task := func(i int, at time.Time) {
		e := &codemode.Execution{ID: fmt.Sprintf("task-%03d", i), Code: "1", Status: codemode.StatusCompleted,
			Task: &codemode.Task{TTL: 24 * time.Hour}, CreatedAt: at, UpdatedAt: at}
		if err := st.CreateExecution(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	runs := server.TaskListPage + 10
	var want []string
	s := newServerRT(t, server.Options{}, 0, func(s *sqlite.Store, _ *notes.Notes) {
		st = s
		for i := range runs {
			task(i, base.Add(time.Duration(i)*time.Second))
			want = append([]string{fmt.Sprintf("task-%03d", i)}, want...)
		}
	})
	c := httpClient(t, s, mcp.ClientCapabilities{})
	var got []string
	req := mcp.ListTasksRequest{}
	for page := 0; ; page++ {
		if page > runs {
			t.Fatalf("tasks/list never ends: cursor %q", req.Params.Cursor)
		}
		list, err := c.ListTasksByPage(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range list.Tasks {
			got = append(got, task.TaskId)
		}
		if req.Params.Cursor = list.NextCursor; req.Params.Cursor == "" {
			break
		}
		if page == 0 {
			task(runs, time.Now())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks listed (-want +got):\n%s", diff)
	}
}

// A task request is the request its JSON decodes to, as mcp-go decodes
// it, however it is spelt: a method or key with escapes (t\u0061sks/get),
// a key in another case (TASK, matched as encoding/json matches keys),
// in a body where "task" appears nowhere as such. Each is the front's to
// answer: mcp-go would answer tasks/get of a task the store holds "task
// not found", and run a task-augmented call as a plain one.
func TestTaskRequestsSpeltOtherwise(t *testing.T) {
	base := serve(t, newServer(t, false), server.TransportHTTP)
	sid := initialize(t, base)
	post := func(body string) map[string]any {
		t.Helper()
		resp := req{method: "POST", path: server.PathMCP, body: body, header: jsonHeaders("Mcp-Session-Id", sid)}.do(t, nil, base)
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") { // the answer, as JSON or an event (after notifications)
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil && m["id"] != nil {
				return m
			}
		}
		t.Fatalf("%s: %d: no answer in %s", body, resp.StatusCode, b)
		return nil
	}
	for i, params := range []string{
		`"task":{"ttl":60000}`, // (its tasks/get spelt otherwise)
		`"t\u0061sk":{"ttl":60000}`,
		`"taſk":{"ttl":60000}`,
		`"TASK":{"ttl":60000}`,
		`"ta\u017fk":{"ttl":60000}`,
	} {
		created := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"1+1"},%s}}`, i, params))
		res, _ := created["result"].(map[string]any)
		task, _ := res["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if id == "" {
			t.Errorf("a codemode call with %s: %v, want a task", params, created)
			continue
		}
		got := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":"g%d","method":"t\u0061sks/get","params":{"t\u0061skId":%q}}`, i, id))
		if res, _ := got["result"].(map[string]any); res["taskId"] != id {
			t.Errorf("t\\u0061sks/get of task %s: %v", id, got)
		}
	}
}

// A tasks/result the client cancels (notifications/cancelled) ends, and
// is not answered, as the specification asks: a client that sends
// tasks/result again after its request timeout, cancelling the one
// before (the TypeScript SDK does, every 60 s), while a person leaves the
// pause undecided, holds no answer waiting per attempt. Past
// server.MaxWaitingAnswers of them a stdio session would end.
func TestACancelledTaskResultEndsOnStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- newServer(t, false).ServeStdio(t.Context(), inR, outW) }()
	answers := make(chan map[string]any, 64)
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil {
				answers <- m
			}
		}
	}()
	defer func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		outW.Close()
	}()
	send := func(lines ...string) {
		t.Helper()
		if _, err := io.WriteString(inW, strings.Join(lines, "\n")+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	end, stop := fixture.WithDeadline(t, context.Background())
	defer stop()
	early := map[string]map[string]any{}       // answers read before they were waited for
	answer := func(id string) map[string]any { // the answer to id; none to a cancelled request comes meanwhile
		t.Helper()
		for {
			if m, ok := early[id]; ok {
				delete(early, id)
				return m
			}
			select {
			case m, ok := <-answers:
				if !ok {
					t.Fatalf("the output ended waiting for the answer to %s", id)
				}
				if got := fmt.Sprint(m["id"]); strings.HasPrefix(got, "cancelled-") {
					t.Errorf("a cancelled request was answered: %v", m)
				} else {
					early[got] = m
				}
			case err := <-done:
				done <- err
				t.Fatalf("the session ended waiting for the answer to %s: %v", id, err)
			case <-end.Done():
				t.Fatalf("no answer to %s by the test's deadline", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"create","method":"tools/call","params":{"name":"codemode","arguments":{"code":"(await notes.createNote({ text: \"undecided\" })).text"},"task":{}}}`)
	answer("init")
	res, _ := answer("create")["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task created: %v", res)
	}
	for i := range server.MaxWaitingAnswers + 1 {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"cancelled-%d","method":"tasks/result","params":{"taskId":%q}}`, i, id),
			fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"cancelled-%d","reason":"timed out"}}`, i),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
		answer(fmt.Sprintf("ping-%d", i))
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"approve","method":"tools/call","params":{"name":"codemode_approve","arguments":{"executionId":%q}}}`, id))
	answer("approve")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"result","method":"tasks/result","params":{"taskId":%q}}`, id))
	if res := fmt.Sprint(answer("result")["result"]); !strings.Contains(res, "undecided") {
		t.Errorf("tasks/result once approved: %s", res)
	}
}

// Over streamable HTTP, a tasks/result the client cancels ends at once,
// with an event stream that holds no answer.
func TestACancelledTaskResultEndsOverHTTP(t *testing.T) {
	reads := &pendingReads{}
	base := serve(t, newServerWith(t, server.Options{Runtime: reads}), server.TransportHTTP)
	sid := initialize(t, base)
	post := func(body string) *http.Response {
		return req{method: "POST", path: server.PathMCP, body: body, header: jsonHeaders("Mcp-Session-Id", sid)}.do(t, nil, base)
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codemode","arguments":{"code":"(await notes.createNote({ text: \"undecided\" })).text"},"task":{}}}`)
	var created struct {
		Result mcp.CreateTaskResult `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || created.Result.Task.TaskId == "" {
		t.Fatalf("no task created: %v", err)
	}
	id := created.Result.Task.TaskId
	result := make(chan *http.Response, 1)
	go func() {
		result <- post(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tasks/result","params":{"taskId":%q}}`, id))
	}()
	fixture.Until(t, "tasks/result to read what the task waits for", func() bool { return reads.n.Load() > 0 })
	// 202, or 200 when mcp-go had a notification of the session waiting
	// and sent it on this POST's answer, as an event stream (it does so
	// for any POST; seen under load).
	if resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		t.Errorf("notifications/cancelled: status %d", resp.StatusCode)
	}
	resp = fixture.Wait(t, "the cancelled tasks/result's end", result)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || len(b) > 0 {
		t.Errorf("the cancelled tasks/result: %d %s %q, want an event stream without an answer", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
