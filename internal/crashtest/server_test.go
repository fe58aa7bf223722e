package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// world is one database with its configuration: a codemode-mcp server
// over stdio whose connector fx is the fixture MCP server, which counts
// its side effects in the effects file (counter appends a name, uncount
// appends -name, or ~name when there is nothing left to undo).
type world struct {
	t           *testing.T
	bin         string
	cfg         string
	effectsFile string
	// fixtureStderr is where the fixture server's stderr goes (its stacks,
	// when watchProgress takes them).
	fixtureStderr string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, bin: fixture.Codemode(t), cfg: filepath.Join(dir, "codemode.yaml"), effectsFile: filepath.Join(dir, "effects.txt"), fixtureStderr: filepath.Join(dir, "fixture-stderr.txt")}
	cfg := fmt.Sprintf(`store:
  path: %s
approvals:
  elicitation: false
connectors:
  fx:
    command: /bin/sh
    args: ["-c", 'exec "$0" 2>>"$1"', %s, %s]
    env:
      FIXTURE_SIDE_EFFECTS: %s
    revert:
      counter: "(args) => fx.uncount({ name: args.name })"
`, strconv.Quote(filepath.Join(dir, "codemode.db")), strconv.Quote(fixture.MCPServer(t)), strconv.Quote(w.fixtureStderr), strconv.Quote(w.effectsFile))
	if err := os.WriteFile(w.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// server is a running codemode-mcp serve with an MCP client on its stdio.
type server struct {
	t      *testing.T
	client *client.Client
	cmd    *exec.Cmd
	stderr *fixture.SyncBuffer
	// gone is closed once the server and every process it started that
	// kept the marker pipe (the fixture server) have exited.
	gone chan struct{}
}

// start starts a server on w's database and completes the handshake
// (protocol 2026-07-28, mcp-go's client's own choice).
func (w *world) start() *server { return w.startWith("") }

// startWith is start with the client asking for protocol version (""
// lets it choose).
func (w *world) startWith(version string) *server {
	t := w.t
	t.Helper()
	marker, keep, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, stderr: &fixture.SyncBuffer{}, gone: make(chan struct{})}
	tr := transport.NewStdioWithOptions(w.bin, nil, []string{"serve", "--config", w.cfg},
		transport.WithCommandFunc(func(_ context.Context, name string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.Command(name, args...)
			cmd.Stderr = s.stderr
			// The write end is inherited by the server and, through it, by
			// the fixture server it starts: the read end sees EOF when all
			// of them are gone.
			cmd.ExtraFiles = []*os.File{keep}
			cmd.WaitDelay = 5 * time.Second
			s.cmd = cmd
			return cmd, nil
		}))
	err = tr.Start(context.Background())
	keep.Close()
	if err != nil {
		marker.Close()
		t.Fatalf("start codemode-mcp: %v", err)
	}
	go func() {
		_, _ = io.Copy(io.Discard, marker)
		marker.Close()
		close(s.gone)
	}()
	s.client = client.NewClient(tr)
	ctx, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "crashtest", Version: "1"}
	req.Params.ProtocolVersion = version
	if _, err := s.client.Initialize(ctx, req); err != nil {
		s.kill()
		t.Fatalf("initialize: %v\nstderr:\n%s", err, s.stderr)
	}
	return s
}

// kill sends SIGKILL to the server and waits until it and the processes
// it started are gone.
func (s *server) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Errorf("kill: %v", err)
	}
	s.wait()
}

// stop closes the server's stdin, as a client that quits does, and waits
// until it and the processes it started are gone.
func (s *server) stop() {
	s.t.Helper()
	s.wait()
}

func (s *server) wait() {
	s.t.Helper()
	_ = s.client.Close() // closes stdin and waits for the server process
	end, cancel := fixture.WithDeadline(s.t, context.Background())
	defer cancel()
	select {
	case <-s.gone:
	case <-end.Done():
		s.t.Fatalf("the server's processes did not exit by the test's deadline\nstderr:\n%s", s.stderr)
	}
}

// call calls tool and decodes its JSON text content; isError is the
// result's flag. A transport failure fails the test.
func (s *server) call(tool string, args map[string]any) (map[string]any, bool) {
	s.t.Helper()
	res, err := s.callRaw(context.Background(), tool, args)
	if err != nil {
		s.t.Fatalf("call %s: %v\nstderr:\n%s", tool, err, s.stderr)
	}
	return res.out, res.isError
}

type result struct {
	out     map[string]any
	isError bool
}

// callRaw is call returning the transport's error (the server may be
// killed meanwhile).
func (s *server) callRaw(ctx context.Context, tool string, args map[string]any) (result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		return result{}, err
	}
	text, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		return result{}, fmt.Errorf("%s: content is %T", tool, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		return result{}, fmt.Errorf("%s: %v: %s", tool, err, text.Text)
	}
	return result{out: out, isError: res.IsError}, nil
}

// background calls tool without waiting; the returned channel gets the
// result or the transport's error (a killed server).
func (s *server) background(tool string, args map[string]any) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.callRaw(context.Background(), tool, args)
		done <- err
	}()
	return done
}

// effects reads the fixture's side effects: each name's net count
// (counter adds one, uncount takes one back).
func (w *world) effects() map[string]int {
	net, _ := w.readEffects()
	return net
}

// idleUndos reads how many times uncount found nothing to undo, by name:
// a revert of a call that never happened, or that was reverted already.
func (w *world) idleUndos() map[string]int {
	_, idle := w.readEffects()
	return idle
}

func (w *world) readEffects() (net, idle map[string]int) {
	w.t.Helper()
	return fixture.SideEffects(w.t, w.effectsFile)
}

// call is one logged call of a run, as `executions show` prints it.
type call struct {
	Seq     int             `json:"seq"`
	Method  string          `json:"method"`
	Args    json.RawMessage `json:"args"`
	State   string          `json:"state"`
	Error   string          `json:"error"`
	Reverts int             `json:"reverts"`
}

// name is the name argument of a counter or uncount call.
func (c call) name() string {
	var a struct{ Name string }
	_ = json.Unmarshal(c.Args, &a)
	return a.Name
}

// run is an execution as `executions show` prints it.
type run struct {
	ID     string `json:"executionId"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Calls  []call `json:"calls"`
}

// unknown counts the run's calls whose outcome is unknown.
func (r run) unknown() int {
	n := 0
	for _, c := range r.Calls {
		if c.State == "unknown" {
			n++
		}
	}
	return n
}

// call returns the program's counter call named name (not a revert's).
func (r run) call(name string) (call, bool) {
	for _, c := range r.Calls {
		if c.Reverts == 0 && c.Method == "counter" && c.name() == name {
			return c, true
		}
	}
	return call{}, false
}

// revertsOf returns the calls a rollback made to revert call seq.
func (r run) revertsOf(seq int) []call {
	var out []call
	for _, c := range r.Calls {
		if c.Reverts == seq {
			out = append(out, c)
		}
	}
	return out
}

// show runs `codemode-mcp executions show ID` on w's database (another
// process, beside the server).
func (w *world) show(id string) run {
	w.t.Helper()
	var r run
	fixture.ShowExecution(w.t, w.bin, w.cfg, id, &r)
	return r
}

// stallAfter is how long a rollback may go without a single revert
// reaching the fixture before watchProgress takes the server's stacks:
// less than the sandbox's 60s timeout of one revert, so the stacks show
// where a stuck revert waits while it still waits. A rollback reverts
// thousands of calls, each in about a millisecond.
const stallAfter = 30 * time.Second

// watchProgress watches the fixture's side effects file while s works on
// a rollback. When it stops growing for stallAfter, a revert is stuck:
// the server is sent SIGQUIT (Go prints every goroutine's stack to its
// stderr, which the failing call then shows) — a diagnosis of a hang seen
// once in CI, not a bound on how long a rollback may take. The returned
// function stops the watch.
func (w *world) watchProgress(s *server) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		size, since := int64(-1), time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			fi, err := os.Stat(w.effectsFile)
			if err != nil || fi.Size() != size {
				if err == nil {
					size = fi.Size()
				}
				since = time.Now()
				continue
			}
			if time.Since(since) >= stallAfter {
				w.t.Logf("no revert reached the fixture for %v: taking the stacks of the fixture and the server (SIGQUIT)\n%s", stallAfter, w.diagnose(s.cmd.Process.Pid))
				_ = s.cmd.Process.Signal(syscall.SIGQUIT)
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
