// Package bench is codemode-mcp's end-to-end performance harness. It holds
// no library code: its benchmarks (bench_test.go) build the codemode-mcp
// binary and the fixture MCP server, drive both with a real mcp-go client
// over stdio, and measure each codemode path against the same call made
// directly to the downstream server in the same run, so the ratios that
// issue 4 sets targets for compare like with like.
//
// Run everything, with the ratio table, with bench/run.sh; the results and
// their interpretation are in BENCHMARKS.md at the module root. The package
// has no Test functions, so `go test ./...` only compiles it.
package bench
