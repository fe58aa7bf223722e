package codemode

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Execution is the durable record of one program.
type Execution struct {
	ID     string     `json:"executionId"`
	Code   string     `json:"code"`
	Status ExecStatus `json:"status"`
	// Result is the program's value when completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the failure message when the status is error (or why it was
	// rejected).
	Error string   `json:"error,omitempty"`
	Logs  []string `json:"logs,omitempty"`
	// Connectors maps each connector the run could use to the fingerprint of
	// its tool schemas at the time the run started.
	Connectors map[string]string `json:"connectors,omitempty"`
	// Clock is what makes Date and Math.random replay.
	Clock Clock `json:"clock"`
	// Owner is the id of the process (Owner) working on the execution
	// while its status is claimed (running, rolling_back); empty
	// otherwise.
	Owner string `json:"owner,omitempty"`
	// Task is set when the run was started as an MCP task (a
	// task-augmented tools/call): nil for every other run.
	Task *Task `json:"task,omitempty"`
	// StartedBy is who started the run; written once, with the run. A
	// run resumed by another person's approval keeps its starter. Zero
	// for a run logged before people were recorded.
	StartedBy Person `json:"startedBy,omitzero"`
	// Trace is the W3C traceparent of the span of the run's first pass,
	// written once, when the run is created with tracing on ("" else):
	// the spans of its later passes (a replay after an approval, a
	// resumption, a rollback) link to it, also in another process or
	// after a restart.
	Trace     string    `json:"trace,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// A Task is what makes a run an MCP task: the client that started it
// polls it by the run's id, which is the task's id, and the run's status
// is the task's (running is working, paused is input_required, …: see
// package server). Its passes run in the background of the process that
// runs them, each bounded by the task timeout instead of the plain
// call's.
type Task struct {
	// TTL is how long after the run's creation the task is offered to
	// clients (tasks/get, tasks/list); the run itself stays in the log
	// as long as any other. Its JSON form is whole milliseconds (ttlMs),
	// as MCP counts it.
	TTL time.Duration `json:"-"`
}

type taskJSON struct {
	TTLMs int64 `json:"ttlMs"`
}

func (t Task) MarshalJSON() ([]byte, error) {
	return json.Marshal(taskJSON{TTLMs: t.TTL.Milliseconds()})
}

// UnmarshalJSON reads a stored task. A ttlMs no writer makes (negative,
// or beyond what a Duration holds: it would wrap to a TTL that never
// expires, or one that expires at once) is an error.
func (t *Task) UnmarshalJSON(b []byte) error {
	var j taskJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.TTLMs < 0 || j.TTLMs > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Errorf("task: ttlMs %d is out of range", j.TTLMs)
	}
	t.TTL = time.Duration(j.TTLMs) * time.Millisecond
	return nil
}

// Clock is what a program's passes share so that Date and Math.random
// replay: the seed of Math.random and the times Date returned, in read
// order.
type Clock struct {
	Seed  int64   `json:"seed"`
	Times []int64 `json:"times,omitempty"` // Unix milliseconds, in read order
}

// EntryKind tells a connector call from a step and from a service's
// answer.
type EntryKind int

const (
	KindCall EntryKind = iota + 1
	KindStep
	// KindService is the answer of a codemode service (codemode.search,
	// codemode.describe): logged so that a replay gives the program what
	// its first pass saw, whatever changed in between. It has no effect to
	// revert.
	KindService
)

var entryKindNames = names[EntryKind]{0: unreadable, KindCall: "call", KindStep: "step", KindService: "service"}

func (k EntryKind) String() string { return entryKindNames.name(k) }

func (k EntryKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

func (k *EntryKind) UnmarshalText(b []byte) error {
	return unmarshalText(k, b, func(s string) (EntryKind, error) { return entryKindNames.parse(s, "entry kind") })
}

// Entry is one logged call or step of an execution.
type Entry struct {
	ExecutionID string    `json:"executionId"`
	Seq         int       `json:"seq"`
	Kind        EntryKind `json:"kind"`
	// Connector and Method name the call (Method is the sandbox name); for a
	// step Connector is "codemode", Method is "step" and Name is the step's
	// name; for a service Connector is "codemode", Method the service
	// ("search") and Args the JSON array of its arguments.
	Connector string          `json:"connector"`
	Method    string          `json:"method"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	State     EntryState      `json:"state"`
	// Reverts is, for a call made by a rollback to undo another call (a
	// configured revert function's call), the seq of the call it undoes;
	// 0 for the program's own calls and steps.
	Reverts int `json:"reverts,omitempty"`
	// Task is, for a call its downstream server runs as a task, the id of
	// that task (connectors.Tasker), logged before anything waits for it;
	// empty for every other entry. Once logged it is never changed.
	Task string `json:"task,omitempty"`
	// DecidedBy is who approved or rejected the call (a pending one) and
	// DecidedAt when; zero for a call nobody decided. Once set it is
	// never changed.
	DecidedBy Person    `json:"decidedBy,omitzero"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Snippet is a saved program, runnable with codemode.run(name, input).
type Snippet struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Code        string          `json:"code"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Connectors are the connectors the source run used.
	Connectors    []string  `json:"connectors,omitempty"`
	FromExecution string    `json:"fromExecution,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
}

// Owner is a process that runs programs: the executions it works on
// (running, rolling back) carry its id. It renews its Heartbeat; when it
// is gone, any process that opens the store recovers its executions (see
// package runtime).
type Owner struct {
	ID string `json:"id"`
	// Host is the machine's name; PID the process id there.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Boot tells where PID means this process: on Linux the boot id and
	// the PID namespace. Another process checks whether the owner is alive
	// by its PID only when Host and Boot are its own.
	Boot string `json:"boot,omitempty"`
	// ProcessStart is the process's start time as its system reports it
	// (on Linux, in clock ticks since boot), to tell a PID that was reused.
	ProcessStart string `json:"processStart,omitempty"`
	// StartedAt is when the owner registered; Heartbeat when it last
	// renewed its lease, which lapses Lease after it.
	StartedAt time.Time     `json:"startedAt"`
	Heartbeat time.Time     `json:"heartbeat"`
	Lease     time.Duration `json:"lease"`
}
