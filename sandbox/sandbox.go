// Package sandbox runs the model's JavaScript/TypeScript programs. It knows
// nothing of MCP or SQLite: connector calls and the other host services are
// reached through the Host interface, so the runtime can answer them from the
// durable log, by calling a connector, or by stopping the program.
//
// This package is the API; the work is done in three packages under it,
// one job each (docs/ARCHITECTURE.md, "The sandbox"):
//
//   - sandbox/source: the model's code made a program: fences, TypeScript,
//     the shapes of code accepted, positions in the model's own source, and
//     the static calls the check before running looks at.
//   - sandbox/pass: one pass of a program in a fresh goja runtime: the
//     globals, host calls, steps, snippets, timers, limits and the outcome;
//     and the types of the API (Program, Host, Outcome…), which the names
//     below stand for.
//   - sandbox/worker: the pool of worker processes that run passes under a
//     memory limit, with its wire protocol and the worker's confinement.
package sandbox

import (
	"context"
	"log/slog"

	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
)

// The types and values of one pass (see sandbox/pass for their documentation).
type (
	Executor    = pass.Executor
	Program     = pass.Program
	Global      = pass.Global
	Limits      = pass.Limits
	Clock       = pass.Clock
	Call        = pass.Call
	Step        = pass.Step
	Host        = pass.Host
	CallError   = pass.CallError
	Status      = pass.Status
	Outcome     = pass.Outcome
	Service     = pass.Service
	ServiceCall = pass.ServiceCall
	Param       = pass.Param
	Checker     = pass.Checker
	Problem     = pass.Problem
)

// How a pass ends (see Status).
const (
	Completed = pass.Completed
	Failed    = pass.Failed
	Stopped   = pass.Stopped
)

// SnippetService is the Host.Service name of codemode.run's lookup.
const SnippetService = pass.SnippetService

var (
	// ErrStop marks a Host error that stops the program.
	ErrStop = pass.ErrStop
	// ErrClosed is returned by Run after Close.
	ErrClosed = pass.ErrClosed
)

// The static calls of a program (see sandbox/source).
type (
	StaticCall  = source.StaticCall
	Literal     = source.Literal
	LiteralProp = source.LiteralProp
)

// StaticCalls returns the static calls of a program, as the check before
// running sees them (see source.StaticCalls).
func StaticCalls(code string) ([]StaticCall, error) { return source.StaticCalls(code) }

// The pool of worker processes (see sandbox/worker).
type (
	ProcessPool    = worker.Pool
	ProcessOptions = worker.Options
	Limiter        = worker.Limiter
)

const (
	// WorkerSubcommand is the binary's hidden sub-command that runs RunWorker.
	WorkerSubcommand = worker.Subcommand
	// The Limiters (see worker.Limiter).
	LimiterSystem   = worker.LimiterSystem
	LimiterSampling = worker.LimiterSampling
)

// NewProcessPool starts a pool of worker processes (see worker.NewPool).
func NewProcessPool(opts ProcessOptions) (*ProcessPool, error) { return worker.NewPool(opts) }

// RunWorker is the body of a worker process (see worker.Main).
func RunWorker(ctx context.Context, log *slog.Logger) error { return worker.Main(ctx, log) }
