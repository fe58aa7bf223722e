package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// Downstream tasks (connectors.Tasker).
//
// A server that declares the tasks capability for tools/call (MCP
// 2025-11-25) runs a tool whose listing says execution.taskSupport
// "optional" or "required" as a task: a tools/call with params.task is
// answered at once with the task, tasks/get reads its status,
// tasks/result its outcome (a tools/call result), tasks/cancel stops it.
// Such tools are listed with Tool.Task set, and the runtime calls them
// through StartTask, PollTask and TaskResult instead of Call.
//
// The 2026-07-28 revision moved tasks into an extension whose tasks/get
// carries the result; mcp-go's server (v1.2.1) offers tasks only in the
// 2025-11-25 form, and refuses tasks/result on 2026-07-28. So a server
// that declares the 2025-11-25 capability on a 2026-07-28 session is
// spoken to in 2025-11-25 instead: the session is started again with the
// 2025-11-25 handshake (errLegacyTasks), once, and the connector keeps to
// it. Tasks live in their server: a stdio server started again, or a
// new HTTP session of a server that keeps tasks per session, no longer
// knows the tasks of the one before (connectors.ErrUnknownTask).

// errLegacyTasks ends a 2026-07-28 session start whose server offers
// tasks in the 2025-11-25 form only (see above).
var errLegacyTasks = errors.New("the server offers tasks in the 2025-11-25 form only")

// maxTaskID bounds a task id a server sends; it is logged and shown.
const maxTaskID = 256

// offersTasks reports whether caps declare task-augmented tools/call.
func offersTasks(caps mcpgo.ServerCapabilities) bool {
	t := caps.Tasks
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

// wireTask is a task as the server sends it (tasks/get's result is one).
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  *int64 `json:"pollInterval"`
}

// check refuses a task the connector cannot log or show.
func (t *wireTask) check() error {
	if t.TaskID == "" || len(t.TaskID) > maxTaskID {
		return fmt.Errorf("the server sent a task id of %d bytes (want 1 to %d)", len(t.TaskID), maxTaskID)
	}
	if visible.HasControl(t.TaskID) {
		return errors.New("the server sent a task id with control characters")
	}
	return nil
}

// pollInterval is the server's hint, within [0, an hour].
func (t *wireTask) pollInterval() time.Duration {
	if t.PollInterval == nil || *t.PollInterval <= 0 {
		return 0
	}
	return min(time.Duration(min(*t.PollInterval, int64(time.Hour/time.Millisecond)))*time.Millisecond, time.Hour)
}

// ended reports whether the task's status is terminal.
func (t *wireTask) ended() bool { return mcpgo.TaskStatus(t.Status).IsTerminal() }

// StartTask sends a call of tool (a tool listed with Task set) as a task
// (connectors.Tasker): a tools/call with params.task, answered with the
// task, or at once with the call's result. Errors are Call's.
func (c *Connector) StartTask(ctx context.Context, tool string, args json.RawMessage) (connectors.TaskStart, error) {
	s, name, args, err := c.prepare(ctx, tool, args)
	if err != nil {
		return connectors.TaskStart{}, err
	}
	req := callRequest(ctx, tool, args)
	req.Params.Task = &mcpgo.TaskParams{}
	raw, err := c.callClient(ctx, s, name, req)
	if err != nil {
		return connectors.TaskStart{}, err
	}
	var ans struct { // the task, or a tools/call result when the server answered at once
		Task *wireTask `json:"task"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return connectors.TaskStart{}, fmt.Errorf("mcp connector %q: call %s: malformed answer: %w", c.cfg.Name, tool, err)
	}
	if ans.Task == nil {
		res, err := c.decode(tool, raw, nil)
		if err != nil {
			return connectors.TaskStart{}, err
		}
		return connectors.TaskStart{Result: &res}, nil
	}
	if err := ans.Task.check(); err != nil {
		return connectors.TaskStart{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
	}
	return connectors.TaskStart{ID: ans.Task.TaskID}, nil
}

// PollTask reads task id with tasks/get (connectors.Tasker). A task the
// server does not know (it answers invalid params: not found, expired)
// wraps connectors.ErrUnknownTask.
func (c *Connector) PollTask(ctx context.Context, id string) (connectors.TaskState, error) {
	t, err := c.getTask(ctx, id)
	if err != nil {
		return connectors.TaskState{}, err
	}
	return connectors.TaskState{Ended: t.ended(), Status: t.Status, Message: t.StatusMessage, PollInterval: t.pollInterval()}, nil
}

// getTask sends tasks/get for id and decodes the task.
func (c *Connector) getTask(ctx context.Context, id string) (*wireTask, error) {
	raw, err := c.taskRequest(ctx, id, "tasks/get", func(ctx context.Context, s *session) error {
		_, err := s.client.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: id}})
		return err
	})
	if err != nil {
		return nil, err
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("mcp connector %q: tasks/get %s: malformed task: %w", c.cfg.Name, id, err)
	}
	return &t, nil
}

// TaskResult returns the outcome of task id, which has ended
// (connectors.Tasker): a completed task's tasks/result, decoded as a
// tools/call result; a failed or cancelled task as the tool's failure.
func (c *Connector) TaskResult(ctx context.Context, id string) (connectors.Result, error) {
	t, err := c.getTask(ctx, id)
	if err != nil {
		return connectors.Result{}, err
	}
	if t.Status == string(mcpgo.TaskStatusCancelled) {
		return connectors.Result{IsError: true, Message: taskFailure("was cancelled", t.StatusMessage)}, nil
	}
	raw, err := c.taskRequest(ctx, id, "tasks/result", func(ctx context.Context, s *session) error {
		_, err := s.client.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: id}})
		return err
	})
	var rpc *taskAnswerError
	if (err == nil || errors.As(err, &rpc)) && !t.ended() {
		// It ended while tasks/result waited for it: how?
		if now, gerr := c.getTask(ctx, id); gerr == nil {
			t = now
		}
	}
	switch {
	case t.Status == string(mcpgo.TaskStatusCancelled):
		return connectors.Result{IsError: true, Message: taskFailure("was cancelled", t.StatusMessage)}, nil
	case errors.As(err, &rpc) && t.Status == string(mcpgo.TaskStatusFailed):
		// A failed task's tasks/result is the error that failed it.
		msg := t.StatusMessage
		if msg == "" {
			msg = rpc.Error()
		}
		return connectors.Result{IsError: true, Message: taskFailure("failed", msg)}, nil
	case err != nil:
		return connectors.Result{}, err
	}
	return c.decode("task "+id, raw, nil)
}

// taskFailure is the message of a task that failed or was cancelled.
func taskFailure(what, msg string) string {
	if msg == "" {
		return "the task " + what
	}
	return "the task " + what + ": " + msg
}

// CancelTask sends tasks/cancel for id (connectors.Tasker); a task that
// has ended, or that the server does not know, is not an error.
func (c *Connector) CancelTask(ctx context.Context, id string) error {
	_, err := c.taskRequest(ctx, id, "tasks/cancel", func(ctx context.Context, s *session) error {
		_, err := s.client.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: id}})
		return err
	})
	var rpc *taskAnswerError
	if errors.As(err, &rpc) || errors.Is(err, connectors.ErrUnknownTask) {
		return nil
	}
	return err
}

// taskAnswerError is a JSON-RPC error a server answered a task request
// with (other than one naming an unknown task).
type taskAnswerError struct{ err error }

func (e *taskAnswerError) Error() string { return e.err.Error() }
func (e *taskAnswerError) Unwrap() error { return e.err }

// taskRequest sends one task request (send) on the current session, on
// the call's timeout, and returns its raw result. A server's invalid
// params (the task is not found or expired) wraps
// connectors.ErrUnknownTask; another JSON-RPC error is a
// *taskAnswerError; a failure of the session is reported as a call's is.
func (c *Connector) taskRequest(ctx context.Context, id, method string, send func(context.Context, *session) error) (json.RawMessage, error) {
	s, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := c.request(ctx, s, false, send)
	var ended *callEnded
	switch {
	case err == nil:
		return raw, nil
	case errors.Is(err, mcpgo.ErrInvalidParams):
		return nil, fmt.Errorf("mcp connector %q: %s %s: %w: %v", c.cfg.Name, method, id, connectors.ErrUnknownTask, err)
	case errors.As(err, &ended) || transportFailed(s, err):
		return nil, c.callError(ctx, s, method, err)
	case errors.Is(err, errEmptyResult):
		return nil, fmt.Errorf("mcp connector %q: %s %s: %w", c.cfg.Name, method, id, err)
	}
	return nil, &taskAnswerError{err: fmt.Errorf("mcp connector %q: %s %s: %w", c.cfg.Name, method, id, err)}
}
