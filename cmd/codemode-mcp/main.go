// Command codemode-mcp serves one MCP tool, codemode, that runs JavaScript
// and TypeScript programs against many tool sources. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
