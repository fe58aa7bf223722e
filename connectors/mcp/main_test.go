package mcp

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// helperEnv makes the test binary a process that opens a connector to the
// stdio server it names (with -linger), prints the server's pid and waits
// for its standard input to end (see TestAStdioServerDiesWithUs).
const helperEnv = "CODEMODE_MCP_TEST_OPEN"

// The variables that make the test binary a stdio MCP server (see
// scriptedServer), each saying what it does besides answering the
// handshake and listing one tool, "flood". Not CODEMODE_ names: the
// connector passes none of those to a server.
const (
	// floodEnv: called, it sends the number of ping requests the value
	// says before answering, and then stops reading its input (see
	// TestServerRequestFloodIsBounded).
	floodEnv = "MCPTEST_FLOOD_SERVER"
	// progressEnv: called, it sends the number of notifications/progress
	// about the call the value says (messages "1", "2"…) before answering.
	progressEnv = "MCPTEST_PROGRESS_SERVER"
	// pageEnv: its tools/list result is the value.
	pageEnv = "MCPTEST_TOOLS_PAGE"
	// resultEnv: its tools/call result is the value.
	resultEnv = "MCPTEST_CALL_RESULT"
	// misanswerEnv: a JSON object whose values are the answers it sends
	// to the methods its keys name, with "{id}" standing for the
	// request's id.
	misanswerEnv = "MCPTEST_MISANSWER"
)

func TestMain(m *testing.M) {
	if command := os.Getenv(helperEnv); command != "" {
		os.Exit(openAndWait(command))
	}
	if os.Getenv(floodEnv)+os.Getenv(progressEnv)+os.Getenv(pageEnv)+os.Getenv(resultEnv)+os.Getenv(misanswerEnv) != "" {
		scriptedServer()
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { fixture.RemoveBinaries() }))
}

// scriptedServer is the stdio MCP server the variables above describe.
func scriptedServer() {
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	var misanswer map[string]string
	_ = json.Unmarshal([]byte(os.Getenv(misanswerEnv)), &misanswer)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		answer := func(result string) {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
			_ = out.Flush()
		}
		if tmpl, ok := misanswer[req.Method]; ok {
			fmt.Fprintln(out, strings.ReplaceAll(tmpl, "{id}", string(req.ID)))
			_ = out.Flush()
			continue
		}
		switch req.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}`)
		case "tools/list":
			answer(cmp.Or(os.Getenv(pageEnv), `{"tools":[{"name":"flood"}]}`))
		case "tools/call":
			pings, _ := strconv.Atoi(os.Getenv(floodEnv))
			for i := range pings {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`+"\n", i)
			}
			progress, _ := strconv.Atoi(os.Getenv(progressEnv))
			for i := 1; i <= progress && len(req.Params.Meta.ProgressToken) > 0; i++ {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"message":"%d"}}`+"\n",
					req.Params.Meta.ProgressToken, i, i)
			}
			answer(cmp.Or(os.Getenv(resultEnv), `{"content":[{"type":"text","text":"flooded"}]}`))
			if pings > 0 {
				select {} // reads nothing more, until killed
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", req.ID)
			_ = out.Flush()
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
