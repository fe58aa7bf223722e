// Package crashtest kills codemode-mcp servers with SIGKILL at random
// points — while a program makes quick side-effecting calls, while a run
// is being approved, while one is being rolled back — starts a new server
// on the same database, and checks from outside what a user relies on:
// no run is left running, every side effect that happened downstream is
// in the log, the log claims at most the call that was in flight (marked
// unknown), and the interrupted run rolls back. It has only tests; they
// are seeded (CRASH_SEED) so that a failure can be replayed.
package crashtest
