package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// helperEnv makes the test binary a process that opens a connector to the
// stdio server it names (with -linger), prints the server's pid and waits
// for its standard input to end (see TestAStdioServerDiesWithUs).
const helperEnv = "CODEMODE_MCP_TEST_OPEN"

func TestMain(m *testing.M) {
	if command := os.Getenv(helperEnv); command != "" {
		os.Exit(openAndWait(command))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { fixture.RemoveBinaries() }))
}

func openAndWait(command string) int {
	c, err := Open(context.Background(), Config{Name: "fx", Command: command, Args: []string{"-linger"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	if s == nil {
		fmt.Fprintln(os.Stderr, "the server did not start:", c.Down())
		return 1
	}
	fmt.Println(s.proc.pid())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}
