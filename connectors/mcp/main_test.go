package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// helperEnv makes the test binary a process that opens a connector to the
// stdio server it names (with -linger), prints the server's pid and waits
// for its standard input to end (see TestAStdioServerDiesWithUs).
const helperEnv = "CODEMODE_MCP_TEST_OPEN"

// floodEnv makes the test binary a stdio MCP server that, called, sends
// the number of ping requests its value says before answering, and then
// stops reading its input (see TestServerRequestFloodIsBounded). Not a
// CODEMODE_ name: the connector passes none of those to a server.
const floodEnv = "MCPTEST_FLOOD_SERVER"

func TestMain(m *testing.M) {
	if command := os.Getenv(helperEnv); command != "" {
		os.Exit(openAndWait(command))
	}
	if n := os.Getenv(floodEnv); n != "" {
		floodServer(n)
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { fixture.RemoveBinaries() }))
}

func floodServer(n string) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		answer := func(result string) {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
		}
		switch req.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[{"name":"flood"}]}`)
		case "tools/call":
			count, _ := strconv.Atoi(n)
			for i := range count {
				fmt.Printf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`+"\n", i)
			}
			answer(`{"content":[{"type":"text","text":"flooded"}]}`)
			select {} // reads nothing more, until killed
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", req.ID)
		}
	}
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
