// Package codemode holds the domain of codemode-mcp's durable runtime: an
// execution and its call log, snippets, their states and the one place
// those states move, the outcome every surface shows, the Store contract
// and the errors shared by the engine and its surfaces.
//
// It depends on no sandbox, database or protocol library (only on the
// neutral connectors package), so that a Store implementation, the MCP
// server and the command line can use these types without linking the
// JavaScript engine. The engine itself is package runtime; stores live in
// packages named for what they depend on (store/sqlite); storetest
// is the conformance suite every Store must pass.
package codemode
