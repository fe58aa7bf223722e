// Package typegen turns JSON Schema into TypeScript declarations for the
// sandbox's connector globals: the codemode tool description,
// codemode.describe and the `types` command use it.
//
// It is pure: no I/O, and no dependency on MCP, SQLite or the sandbox. Its
// output is valid TypeScript (checked with tsc --strict) and deterministic:
// object properties and definitions are sorted, lists keep their order.
// Schemas it does not understand become unknown rather than an error.
package typegen
