package codemode

import "context"

// EventKind is what happened to a run while a request drove it.
type EventKind int

// Event kinds.
const (
	EventStarted   EventKind = iota + 1 // a new run began
	EventApproved                       // its pending calls were approved; it resumes
	EventCall                           // it is making a call (Connector, Method, Seq)
	EventProgress                       // a downstream reported progress on a call (Message)
	EventPaused                         // a call awaits approval (Message names it)
	EventCompleted                      // it completed
	EventFailed                         // it ended in error (Message)
	EventRejected                       // it ended rejected (Message)
	EventCancelled                      // it was cancelled (Message)
)

var eventKindNames = names[EventKind]{
	EventStarted: "started", EventApproved: "approved", EventCall: "call",
	EventProgress: "progress", EventPaused: "paused", EventCompleted: "completed",
	EventFailed: "failed", EventRejected: "rejected", EventCancelled: "cancelled",
}

func (k EventKind) String() string { return eventKindNames.name(k) }

// An Event is one thing that happened to a run.
type Event struct {
	Kind        EventKind
	ExecutionID string
	// Connector, Method and Seq name the call of EventCall and
	// EventProgress.
	Connector, Method string
	Seq               int
	Message           string
}

// An Observer hears the events of the runs a request drives: the surface
// that serves the request (the MCP server) passes one in the request's
// context (WithObserver) to report progress and log what happens. Event
// must be safe for concurrent use, must not block, and must not call back
// into the runtime.
type Observer interface {
	Event(Event)
}

type observerKey struct{}

// WithObserver returns ctx carrying o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// ObserverFrom returns the Observer ctx carries, or nil.
func ObserverFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}
