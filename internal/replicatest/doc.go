// Package replicatest runs codemode-mcp as a team would: two `serve
// --transport http` replicas on one PostgreSQL database (a throwaway
// cluster, internal/pgtest), with a fixture MCP server behind each that
// counts its side effects in one file. It checks from outside that a run
// paused through one replica is listed, approved and finished through the
// other, that approvals racing on both replicas happen exactly once, and
// that a replica killed with SIGKILL mid-run has its run recovered by the
// other within the lease, and that when the database crashes under load
// (a cluster of the test's own, stopped in immediate mode and started
// again) every run is settled within the lease of its return, each side
// effect in its log. It has only tests.
package replicatest
