// Package connectors defines the neutral types every tool source implements:
// downstream MCP servers, OpenAPI documents and native Go connectors. Nothing
// here depends on MCP, SQLite or the sandbox.
package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// A Tool is one callable method of a connector.
type Tool struct {
	// Name is the method name as the sandbox sees it: a valid JavaScript
	// identifier (see Identifier).
	Name string `json:"name"`
	// SourceName is the tool's name at its source (the MCP tool name, the
	// OpenAPI operation). It is what Call receives.
	SourceName string `json:"sourceName"`
	// Title is an optional human-readable title.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema object for the single argument; never nil
	// (connectors use {"type":"object"} when the source has none).
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is an optional JSON Schema for the unwrapped result.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Annotations     `json:"annotations"`
	// Deprecated marks a tool its source deprecates (an OpenAPI operation's
	// deprecated flag); declarations mark it @deprecated.
	Deprecated bool `json:"deprecated,omitempty"`
	// Tags are the groups the source puts the tool in (an OpenAPI
	// operation's tags); codemode.search finds tools by them.
	Tags []string `json:"tags,omitempty"`
	// Route is an HTTP operation's method and path template ("GET
	// /repos/{owner}/{repo}"), empty for other tools; codemode.search
	// finds tools by its words.
	Route string `json:"route,omitempty"`
	// RequiresApproval is the connector's own verdict: a native tool's flag,
	// an MCP tool annotated destructive and not read-only, an OpenAPI
	// operation with a non-safe method. Config globs add to it.
	RequiresApproval bool `json:"requiresApproval,omitempty"`
	// Task reports that the source runs calls of the tool as tasks of its
	// own (an MCP tool whose server offers tasks for it): the connector's
	// Capabilities hold a Tasker, and the runtime starts such a call with
	// StartTask.
	Task bool `json:"task,omitempty"`
}

// KnownReadOnly reports whether the source says the tool has no side
// effects: an MCP tool annotated readOnlyHint: true, an OpenAPI GET, HEAD or
// OPTIONS operation, a native method marked so (all through
// Annotations.ReadOnly). The runtime logs a call of any other tool before
// making it (write-ahead), so that a crash never hides a side effect.
func (t Tool) KnownReadOnly() bool {
	return t.Annotations.ReadOnly != nil && *t.Annotations.ReadOnly
}

// Annotations are the behaviour hints a source gives for a tool. Nil means
// the source said nothing.
type Annotations struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// Result is what a tool call produced.
type Result struct {
	// Value is the result as the program receives it, as JSON.
	// MCP results are unwrapped: structuredContent, else the text parsed as
	// JSON when it is JSON, else the text as a JSON string.
	Value json.RawMessage `json:"value,omitempty"`
	// IsError reports that the tool itself failed; Message carries its text.
	IsError bool   `json:"isError,omitempty"`
	Message string `json:"message,omitempty"`
}

// A Connector exposes one tool source to the sandbox.
// Its methods must be safe for concurrent use.
type Connector interface {
	// Name is the connector's global name in the sandbox.
	Name() string
	// Tools lists the tools in a stable order, names already sanitized and
	// unique (AssignNames does both from the SourceNames).
	Tools(ctx context.Context) ([]Tool, error)
	// Call invokes the tool whose SourceName is tool. A tool's own failure
	// is reported in the Result (IsError, with a Message saying what was
	// wrong); err is reserved for a tool the connector does not have
	// (wrapping ErrUnknownTool) and for transport or protocol failures.
	Call(ctx context.Context, tool string, args json.RawMessage) (Result, error)
	// Close releases the connector's resources (stopping and waiting for any
	// subprocess). It is safe to call more than once.
	Close() error
	// Capabilities says what the connector can do beyond these methods,
	// and what it says of itself beside its tools.
	Capabilities() Capabilities
}

// Capabilities are what a connector can do beyond the methods of
// Connector, and what it says of itself beside its tools: the one place
// the runtime and the app learn either. A field left zero is something
// the connector does not do or say. A capability's field usually holds
// the connector itself (Capabilities{Reverter: c}); a connector that can
// do a thing only as configured (an MCP server behind OAuth signs in)
// sets it only then.
//
// The runtime asks for them each time it lists the connector's tools (at
// start, after a change, a sign-in or a restart) and keeps them with that
// listing, so what they hold may change from one listing to the next (an
// OpenAPI document loaded late) and must agree with the Tools listed just
// before.
//
// A connector that wraps another by embedding it keeps the embedded one's
// Capabilities; a wrapper that changes how calls are made (its own Call)
// says what it keeps in its own Capabilities method, since the
// capabilities it inherits call the embedded connector directly.
type Capabilities struct {
	// Description is the connector's own one-line description ("" for
	// none); a configured description takes its place.
	Description string
	// Definitions holds the schemas its tools' schemas share (an OpenAPI
	// document's components): a local $ref into a definition container
	// ("#/components/schemas/NAME", "#/$defs/NAME", "#/definitions/NAME")
	// that a tool's InputSchema or OutputSchema does not hold itself
	// resolves in Definitions, a JSON object holding such containers (nil
	// when there are none).
	Definitions json.RawMessage
	// Diagnostics are the problems that did not stop the connector, for
	// the person who configured it, one sentence each without the
	// connector's name: tool names that collided after sanitizing, an
	// OpenAPI document's operations skipped and why, a cached copy used
	// offline.
	Diagnostics []string
	// PerUser says that the source is reached with each person's own
	// credentials (credentials: per_user): a call uses the grant of the
	// person its CallHook names, a sign-in is that person's and serves
	// their runs only, and NeedsSignIn answers for the person the
	// context's CallHook names.
	PerUser bool

	Tasker    Tasker    // runs calls of tools with Tool.Task as tasks of its source
	Router    Router    // a generic tool whose calls reach what other tools reach
	Reverter  Reverter  // undoes some calls natively in a rollback
	Disposer  Disposer  // holds resources per execution
	SignIner  SignIner  // its source may need a person to sign in
	Refresher Refresher // lists its source's tools again on demand
}

// Tasker is the capability (Capabilities.Tasker) of connectors whose source
// can run a call as a task of its own: the call is sent, the source answers
// at once with the task's id, the task works on, and its result is read once
// it has ended (a downstream MCP server's task-augmented tools/call,
// tasks/get, tasks/result and tasks/cancel). The runtime logs the task's id
// before anything waits for it, and no program pass runs while it waits; a
// pass that reaches the call again reads the task instead of calling the
// tool. Its methods must be safe for concurrent use.
type Tasker interface {
	// StartTask sends a call of tool (by SourceName; a Tool with Task set)
	// as a task and returns it. A source that answered the call at once,
	// without a task, gives its result in TaskStart.Result. An error is
	// what Call would have returned.
	StartTask(ctx context.Context, tool string, args json.RawMessage) (TaskStart, error)
	// PollTask reads the state of task id, started by StartTask. It
	// returns an error wrapping ErrUnknownTask when the source does not
	// know the task (any more): it expired, or its server restarted and
	// forgot it, so whether the call took effect cannot be known.
	PollTask(ctx context.Context, id string) (TaskState, error)
	// TaskResult returns the outcome of task id, which has ended, as Call
	// would have returned the call's: a task that failed or was cancelled
	// is a Result with IsError (the tool's own failure).
	TaskResult(ctx context.Context, id string) (Result, error)
	// CancelTask asks the source to stop task id. A task that has already
	// ended, or is unknown, is not an error.
	CancelTask(ctx context.Context, id string) error
}

// TaskStart is what StartTask gave: a task (ID), or the call's result.
type TaskStart struct {
	// ID is the task's id at its source (bounded, printable); empty when
	// Result is set.
	ID string
	// Result is the call's outcome when the source answered it at once.
	Result *Result
}

// TaskState is what PollTask read.
type TaskState struct {
	// Ended: the task completed, failed or was cancelled; TaskResult
	// gives its outcome.
	Ended bool
	// Status is the source's word for the state ("working", "completed",
	// …), Message what it says about it, both for people.
	Status, Message string
	// PollInterval is how often the source suggests reading the task (0:
	// no suggestion).
	PollInterval time.Duration
}

// ErrUnknownTask is returned (wrapped) by Tasker.PollTask and TaskResult
// for a task the source does not know.
var ErrUnknownTask = errors.New("unknown task")

// Reverter is the capability (Capabilities.Reverter) of connectors that can
// undo some of their calls natively. Revert is called during a rollback with
// the arguments and result of an applied call, newest first.
type Reverter interface {
	// Revertible reports whether calls of the tool (by SourceName) can be
	// reverted.
	Revertible(tool string) bool
	Revert(ctx context.Context, tool string, args, result json.RawMessage) error
}

// Disposer is the capability (Capabilities.Disposer) of connectors that hold
// per-execution resources. DisposeExecution is called once per terminal
// transition of an execution (never on pause); it must be idempotent.
type Disposer interface {
	DisposeExecution(ctx context.Context, executionID string) error
}

// Refresher is the capability (Capabilities.Refresher) of connectors whose
// tool list can change while they run and can be listed again on demand (a
// downstream MCP server): Refresh lists the source's tools again, after
// which Tools gives them.
type Refresher interface {
	Refresh(ctx context.Context) error
}

// ErrUnknownTool is returned (wrapped) by Call for a tool the connector does
// not have.
var ErrUnknownTool = errors.New("unknown tool")
