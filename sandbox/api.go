package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// An Executor runs programs. Implementations: the in-process goja executor
// (pass.NewInProcess) and the pool of worker processes (worker.NewPool).
// Run must be safe for concurrent use; each Run executes one pass of one
// program.
type Executor interface {
	// Run executes one pass of p, calling host for every connector call and
	// codemode.* service. It returns when the program settles, is stopped by
	// the host, fails or hits a limit. Script failures are reported in the
	// Outcome; the error is for internal failures only.
	Run(ctx context.Context, p Program, host Host) (Outcome, error)
	// Close stops the executor and waits for everything it started.
	Close() error
}

// ErrClosed is returned by an Executor's Run after Close.
var ErrClosed = errors.New("sandbox: executor closed")

// Program is one pass of a program.
type Program struct {
	// Code is the model's source in any accepted shape (see source.Normalize).
	Code string
	// Globals are the connector objects to install.
	Globals []Global
	Limits  Limits
	// Clock makes time and randomness replay: Math.random draws from a
	// generator seeded with Clock.Seed, and the n-th read of the clock
	// (Date.now(), new Date()) returns Clock.Times[n] when present.
	Clock Clock
	// Services are the host-backed functions of the codemode global
	// besides step and run (see Service).
	Services []Service
}

// Service is a host-backed function of the codemode global: a program's
// codemode.<Name>(…) checks its arguments against Params, asks the host
// (Host.Service with the arguments as a JSON array) and resolves with the
// JSON value the host answers. The host decides which it offers
// (codemode.search and codemode.describe, for the runtime); adding one
// takes its entry in the Program's Services and its answer in the Host.
// Each call takes the next sequence number, as a connector call does, so
// that the host can log its answer and replay it.
type Service struct {
	Name   string // not "step" or "run"
	Params []Param
}

// Param is one parameter of a Service.
type Param struct {
	Name string
	// String makes it a string the program must pass; otherwise it is any
	// value JSON can carry (undefined and a missing argument are null).
	String bool
}

// SnippetService is the name under which Host.Service is asked for the
// source of a saved snippet by codemode.run(name, input): the arguments
// are [name, input] (input "null" when none was given, which the host may
// refuse with an error, a schema violation), and the answer is the
// source as a JSON string. It takes no sequence number (Seq 0).
const SnippetService = "run"

// ServiceCall is one call of a Service, or codemode.run's lookup of a
// snippet (SnippetService).
type ServiceCall struct {
	// Seq is the call's number in the sequence connector calls and steps
	// share (see Call); 0 when it has none: the lookup of a snippet, and
	// a service called inside a step's function, since the step's value
	// is what replays then.
	Seq  int
	Name string
	Args json.RawMessage // the JSON array of the arguments
}

// Global is one connector object in the sandbox.
type Global struct {
	Name    string
	Methods []string // sorted
	// Unavailable, when not empty, says why this connector cannot be used
	// now (its downstream did not start): no object is installed, and a
	// program that names it is told this instead of only "not defined".
	Unavailable string
	// Forward makes any other property read on the connector a method
	// too: calling it asks the host for a call of that name
	// (forward_unknown), which the host may refuse.
	Forward bool
}

// NotMethods are property names that generic code probes on any object
// (await, JSON.stringify, console.log): on a connector they read as
// undefined rather than as unknown methods, and the check before running
// does not take them for calls.
var NotMethods = map[string]bool{"then": true, "toJSON": true, "catch": true, "finally": true}

// Limits bound one pass. Zero values mean the defaults below.
type Limits struct {
	Timeout       time.Duration // wall clock for the whole pass, busy or awaiting (default 60s)
	MaxStackDepth int           // JS call stack depth (default 1000)
	MaxCalls      int           // host calls (connector calls, steps, services, snippet lookups) per pass (default 10000)
	MaxLogBytes   int           // captured console output; past it a truncation marker (default 1 MiB)
	MaxCodeBytes  int           // size of Code (default 1 MiB)
	// MaxClockReads bounds the clock readings (Date.now(), new Date()) of a
	// pass, each of which is kept for replay (default 1,000,000): past it
	// the pass fails with "too many clock readings".
	MaxClockReads int
}

// Defaults for zero Limits fields.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxStackDepth = 1000
	DefaultMaxCalls      = 10000
	DefaultMaxLogBytes   = 1 << 20
	DefaultMaxCodeBytes  = 1 << 20
	DefaultMaxClockReads = 1_000_000
)

// WithDefaults returns l with zero (or negative) fields replaced by the
// defaults.
func (l Limits) WithDefaults() Limits {
	l.Timeout = orDefault(l.Timeout, DefaultTimeout)
	l.MaxStackDepth = orDefault(l.MaxStackDepth, DefaultMaxStackDepth)
	l.MaxCalls = orDefault(l.MaxCalls, DefaultMaxCalls)
	l.MaxLogBytes = orDefault(l.MaxLogBytes, DefaultMaxLogBytes)
	l.MaxCodeBytes = orDefault(l.MaxCodeBytes, DefaultMaxCodeBytes)
	l.MaxClockReads = orDefault(l.MaxClockReads, DefaultMaxClockReads)
	return l
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Clock carries what makes Date and Math.random replay.
type Clock struct {
	Seed  int64   `json:"seed"`
	Times []int64 `json:"times,omitempty"` // Unix milliseconds, in read order
}

// Call is one connector call made by the program. Seq numbers are assigned
// in program order, synchronously at the call site, starting at 1 and shared
// with codemode.step, the Services and the calls of snippets run by
// codemode.run.
type Call struct {
	Seq       int             `json:"seq"`
	Connector string          `json:"connector"`
	Method    string          `json:"method"`
	Args      json.RawMessage `json:"args"` // JSON object; {} when the program passed nothing
}

// Step is a codemode.step(name, fn) request.
type Step struct {
	Seq  int    `json:"seq"`
	Name string `json:"name"`
}

// Host serves the program's calls. Methods are called off the VM: on
// goroutines of their own or, for a call made while nothing else is
// pending, on the VM's goroutine between two of its turns; possibly
// concurrently (Promise.all). They must be safe for concurrent use.
//
// An error wrapping ErrStop stops the program: the VM is interrupted in a
// way the program cannot catch, no further Host method is called in this
// pass, and Outcome.Stop carries the error. Any other error is thrown into
// the program as an Error with the error's message.
type Host interface {
	// Call performs (or replays) a connector call and returns its value.
	Call(ctx context.Context, c Call) (json.RawMessage, error)
	// StepResult returns the recorded value of a step; ok is false when the
	// step has not run before and must run now.
	StepResult(ctx context.Context, s Step) (value json.RawMessage, ok bool, err error)
	// StepDone records the value of a step that just ran (value is JSON,
	// "null" for undefined), or its failure (errMsg non-empty).
	StepDone(ctx context.Context, s Step, value json.RawMessage, errMsg string) error
	// Service answers (or replays) a host-backed function of the codemode
	// global (see Service and SnippetService); the value returned is
	// JSON.
	Service(ctx context.Context, s ServiceCall) (json.RawMessage, error)
}

// CallError is a Host.Call error with details: the members of Details, a
// JSON object, become properties of the Error thrown into the program
// (a failed HTTP call's status and body), but for those an Error already
// has (message, stack, name). Details also cross the worker pipe.
type CallError struct {
	Message string
	Details json.RawMessage
}

func (e *CallError) Error() string { return e.Message }

// ErrStop marks a Host error that stops the program (pause, refusal,
// divergence).
var ErrStop = errors.New("program stopped by host")

// Status is how a pass ended.
type Status int

const (
	// Completed: the program returned a value.
	Completed Status = iota + 1
	// Failed: the program threw, had a syntax error, or hit a limit.
	Failed
	// Stopped: the host stopped the program (Outcome.Stop).
	Stopped
)

func (s Status) String() string {
	if s < Completed || s > Stopped {
		return "unknown"
	}
	return [...]string{"completed", "failed", "stopped"}[s-Completed]
}

// Outcome is the end of one pass.
type Outcome struct {
	Status Status
	// Result is the program's value as JSON when Completed ("null" for
	// undefined and for values JSON cannot represent).
	Result json.RawMessage
	// Error is the failure message when Failed, with line:col in the model's
	// own source where there is one.
	Error string
	// Stop is the host's error when Stopped.
	Stop error
	// Logs is the captured console output, one entry per console call.
	Logs []string
	// Clock is the clock of this pass: the input's Seed, and every time value
	// read (the input's Times as a prefix).
	Clock Clock
}
