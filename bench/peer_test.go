package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// startTimeout bounds a peer's start-up and initialize handshake.
const startTimeout = 30 * time.Second

// A peer is an MCP server subprocess with an mcp-go client connected to it
// over stdio: exactly what an MCP host such as Claude Desktop does.
type peer struct {
	client *client.Client
	cmd    *exec.Cmd // the server process; set once started
	stderr *tail
}

// startPeer starts command with args as a stdio MCP server, with env added
// to this process's environment, completes the initialize handshake, and
// registers a cleanup that closes the client and waits for the process.
func startPeer(tb testing.TB, env []string, command string, args ...string) *peer {
	tb.Helper()
	p := &peer{stderr: newTail(64 << 10)}
	tr := transport.NewStdioWithOptions(command, nil, args,
		transport.WithCommandFunc(func(_ context.Context, name string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.Command(name, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = p.stderr // exec copies it; Wait waits for the copy
			cmd.WaitDelay = 2 * time.Second
			p.cmd = cmd
			return cmd, nil
		}))
	// The transport keeps this context for the whole session.
	if err := tr.Start(context.Background()); err != nil {
		tb.Fatalf("start %s: %v", filepath.Base(command), err)
	}
	p.client = client.NewClient(tr)
	tb.Cleanup(func() {
		if err := p.client.Close(); err != nil {
			tb.Logf("close %s: %v", filepath.Base(command), err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "codemode-bench", Version: "1.0.0"}
	if _, err := p.client.Initialize(ctx, req); err != nil {
		tb.Fatalf("initialize %s: %v\nstderr:\n%s", filepath.Base(command), err, p.stderr)
	}
	return p
}

// text calls tool with args and returns the text of its only content,
// failing on a protocol error or an isError result.
func (p *peer) text(ctx context.Context, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := p.client.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("call %s: %w\nstderr:\n%s", tool, err, p.stderr)
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("call %s: %d content items, want 1", tool, len(res.Content))
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		return "", fmt.Errorf("call %s: content is %T, want text", tool, res.Content[0])
	}
	if res.IsError {
		return "", fmt.Errorf("call %s: isError: %s", tool, tc.Text)
	}
	return tc.Text, nil
}

// outcome is the part of a codemode outcome the benchmarks check.
type outcome struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// run runs code through the codemode tool and returns its result, failing
// unless the run completed.
func (p *peer) run(ctx context.Context, code string) (json.RawMessage, error) {
	text, err := p.text(ctx, "codemode", map[string]any{"code": code})
	if err != nil {
		return nil, err
	}
	var o outcome
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		return nil, fmt.Errorf("decode outcome %q: %w", text, err)
	}
	if o.Status != "completed" {
		return nil, fmt.Errorf("run ended %s: %s", o.Status, o.Error)
	}
	return o.Result, nil
}

// workers returns the process ids of the descendants of the peer's server
// process that run the same executable: codemode-mcp's sandbox workers.
func (p *peer) workers() ([]int, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.cmd.Process.Pid))
	if err != nil {
		return nil, fmt.Errorf("server executable: %w", err)
	}
	desc, err := descendants(p.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range desc {
		if e, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && e == exe {
			out = append(out, pid)
		}
	}
	return out, nil
}

// descendants lists the process ids below root in the process tree, read
// from /proc.
func descendants(root int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, children[pid]...)
		queue = append(queue, children[pid]...)
	}
	slices.Sort(out)
	return out, nil
}

// A tail keeps the last bytes written to it: a server's stderr, shown when
// something fails.
type tail struct {
	limit int

	mu  sync.Mutex
	buf []byte // guarded by mu
}

func newTail(limit int) *tail { return &tail{limit: limit} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = slices.Delete(t.buf, 0, over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
