// Package sandbox is the API of running the model's JavaScript/TypeScript
// programs: an Executor runs one pass of a Program, reaching connector
// calls and the other host services through the Host interface, and
// returns its Outcome. It knows nothing of MCP or SQLite, so the runtime
// can answer a Host call from the durable log, by calling a connector, or
// by stopping the program; and it imports nothing but the standard
// library, so a package that only speaks of programs and outcomes does
// not link the JavaScript engine.
//
// The work is done in three packages beneath it, one job each
// (docs/ARCHITECTURE.md, "The packages"), which import this one:
//
//   - sandbox/source: the model's code made a program: fences, TypeScript,
//     the shapes of code accepted, positions in the model's own source, and
//     the static calls the check before running looks at (StaticCalls).
//   - sandbox/pass: one pass of a program in a fresh goja runtime: the
//     globals, host calls, steps, snippets, timers, limits and the
//     outcome; and the in-process Executor (NewInProcess).
//   - sandbox/worker: the Executor that runs passes in a pool of worker
//     processes under a memory limit (NewPool), with its wire protocol,
//     the worker's side (Main) and its confinement.
package sandbox
