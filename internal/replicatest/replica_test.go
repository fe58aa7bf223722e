package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

// lease is the replicas' lease: a dead replica's runs are recovered
// within it.
const lease = 4 * time.Second

// team is one database and configuration shared by replicas.
type team struct {
	t           *testing.T
	bin         string
	cfg         string
	effectsFile string
	token       string // the replicas' own clients' bearer token, if any
}

func newTeam(t *testing.T) *team {
	t.Helper()
	return newTeamOn(t, pgtest.NewDatabase(t), teamConfig{})
}

// teamConfig is what a team's configuration has besides the defaults.
type teamConfig struct {
	server    string // the server section's lines, indented by two spaces
	approvals string // more lines of the approvals section, indented
	token     string // the bearer token the replicas' own clients send
}

// newTeamOn is newTeam on the database at url, configured with more.
func newTeamOn(t *testing.T, url string, more teamConfig) *team {
	t.Helper()
	dir := t.TempDir()
	tm := &team{t: t, bin: fixture.Codemode(t), cfg: filepath.Join(dir, "codemode.yaml"), effectsFile: filepath.Join(dir, "effects.txt"), token: more.token}
	// Every run is kept (max_executions): the tests read their logs.
	cfg := fmt.Sprintf(`store:
  path: %s
  lease: %s
  max_executions: 1000000
approvals:
  elicitation: false
%ssandbox:
  isolation: inprocess
connectors:
  fx:
    command: %s
    env:
      FIXTURE_SIDE_EFFECTS: %s
`, strconv.Quote(url), lease, more.approvals, strconv.Quote(fixture.MCPServer(t)), strconv.Quote(tm.effectsFile))
	if more.server != "" {
		cfg += "server:\n" + more.server
	}
	if err := os.WriteFile(tm.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return tm
}

// replica is a running `codemode-mcp serve --transport http` with an MCP
// client connected to it.
type replica struct {
	t      *testing.T
	name   string
	addr   string
	cmd    *exec.Cmd
	client *client.Client
	stderr *fixture.SyncBuffer
	done   chan struct{} // closed when the process has exited
}

// start starts a replica on a free loopback port and connects to it.
func (tm *team) start(name string) *replica {
	tm.t.Helper()
	return tm.startOn(name, freeAddr(tm.t))
}

// startOn starts a replica listening on addr and connects to it.
func (tm *team) startOn(name, addr string) *replica {
	t := tm.t
	t.Helper()
	r := &replica{t: t, name: name, addr: addr, stderr: &fixture.SyncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(tm.bin, "serve", "--config", tm.cfg, "--transport", "http", "--addr", addr)
	r.cmd.Stderr = r.stderr
	r.cmd.WaitDelay = 5 * time.Second
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start replica %s: %v", name, err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(r.stop)
	end, cancel := fixture.WithDeadline(t, context.Background())
	defer cancel()
	for {
		c, err := connect(addr, tm.token)
		if err == nil {
			r.client = c
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("replica %s exited at start: %v\nstderr:\n%s", name, r.cmd.ProcessState, r.stderr)
		case <-time.After(100 * time.Millisecond): // a client's retry
		case <-end.Done():
			t.Fatalf("replica %s did not answer by the test's deadline: %v\nstderr:\n%s", name, err, r.stderr)
		}
	}
}

// connect returns an MCP client of the server at addr, initialized,
// sending token as its bearer token when there is one.
func connect(addr, token string) (*client.Client, error) {
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient("http://"+addr+"/mcp", opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "replicatest", Version: "1"}
	if err = c.Start(ctx); err == nil {
		_, err = c.Initialize(ctx, req)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// kill sends SIGKILL to the replica and waits for it to exit.
func (r *replica) kill() {
	r.t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		r.t.Errorf("kill %s: %v", r.name, err)
	}
	<-r.done
	if r.client != nil {
		r.client.Close()
		r.client = nil
	}
}

// stop asks the replica to stop (SIGTERM) and waits for it.
func (r *replica) stop() {
	if r.client != nil {
		r.client.Close()
		r.client = nil
	}
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	end, cancel := fixture.WithDeadline(r.t, context.Background())
	defer cancel()
	select {
	case <-r.done:
	case <-end.Done():
		_ = r.cmd.Process.Kill()
		<-r.done
		r.t.Errorf("replica %s did not stop by the test's deadline\nstderr:\n%s", r.name, r.stderr)
	}
}

// call calls tool and decodes its JSON text content; isError is the
// tool result's.
func (r *replica) call(tool string, args map[string]any) (out map[string]any, isError bool) {
	r.t.Helper()
	out, isError, err := r.callRaw(context.Background(), tool, args)
	if err != nil {
		r.t.Fatalf("%s: call %s: %v\nstderr:\n%s", r.name, tool, err, r.stderr)
	}
	return out, isError
}

func (r *replica) callRaw(ctx context.Context, tool string, args map[string]any) (map[string]any, bool, error) {
	return callOn(ctx, r.client, tool, args)
}

// callOn calls tool through c and decodes its JSON text content; isError
// is the tool result's.
func callOn(ctx context.Context, c *client.Client, tool string, args map[string]any) (map[string]any, bool, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, false, err
	}
	if len(res.Content) == 0 {
		return nil, false, fmt.Errorf("%s: no content", tool)
	}
	text, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		return nil, false, fmt.Errorf("%s: content is %T", tool, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		// An error result may be plain text.
		return map[string]any{"text": text.Text}, res.IsError, nil
	}
	return out, res.IsError, nil
}

// effects counts each name the fixture's counter appended.
func (tm *team) effects() map[string]int {
	tm.t.Helper()
	net, _ := fixture.SideEffects(tm.t, tm.effectsFile)
	return net
}

// show is `codemode-mcp executions show id` on the team's database.
func (tm *team) show(id string) run {
	tm.t.Helper()
	var r run
	fixture.ShowExecution(tm.t, tm.bin, tm.cfg, id, &r)
	return r
}

type run struct {
	ID     string `json:"executionId"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Log    []struct {
		Seq    int             `json:"seq"`
		Method string          `json:"method"`
		Args   json.RawMessage `json:"args"`
		State  string          `json:"state"`
	} `json:"calls"`
}

// pausing is a program that pauses for approval (delete_thing needs it)
// before its side effect, which therefore happens only once approved.
func pausing(name string) string {
	return fmt.Sprintf(`async () => { await fx.delete_thing({ id: %q }); await fx.counter({ name: %q }); return "done"; }`, name, name)
}

// A run paused through replica A is listed by B, approved through B, and
// its side effect happens once.
func TestPauseOnOneApproveOnAnother(t *testing.T) {
	tm := newTeam(t)
	a, b := tm.start("A"), tm.start("B")
	out, _ := a.call("codemode", map[string]any{"code": pausing("once")})
	if out["status"] != "paused" {
		t.Fatalf("run through A: %v", out)
	}
	id := out["executionId"].(string)
	list, _ := b.call("codemode_executions", map[string]any{"status": "paused"})
	if !strings.Contains(fmt.Sprint(list), id) {
		t.Fatalf("B does not list the run A paused (%s): %v", id, list)
	}
	out, isErr := b.call("codemode_approve", map[string]any{"executionId": id})
	if isErr || out["status"] != "completed" {
		t.Fatalf("approve through B: %v", out)
	}
	if got := tm.effects(); got["once"] != 1 || len(got) != 1 {
		t.Errorf("side effects %v, want once exactly once", got)
	}
	if r := tm.show(id); r.Status != "completed" {
		t.Errorf("the run is %s, want completed", r.Status)
	}
	// A sees what B did.
	out, isErr = a.call("codemode_approve", map[string]any{"executionId": id})
	if !isErr {
		t.Errorf("approving the finished run again through A: %v", out)
	}
	if got := tm.effects()["once"]; got != 1 {
		t.Errorf("once happened %d times after a second approval, want 1", got)
	}
}

// Both replicas approve the same paused run at the same moment, 20 times:
// each side effect happens exactly once, and exactly one approval of each
// run finishes it.
func TestRacingApprovalsHappenOnce(t *testing.T) {
	tm := newTeam(t)
	a, b := tm.start("A"), tm.start("B")
	const runs = 20
	for i := range runs {
		name := fmt.Sprintf("race%d", i)
		out, _ := a.call("codemode", map[string]any{"code": pausing(name)})
		if out["status"] != "paused" {
			t.Fatalf("run %d: %v", i, out)
		}
		id := out["executionId"].(string)
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			results [2]map[string]any
			errs    [2]bool
		)
		for k, r := range []*replica{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out, isErr, err := r.callRaw(context.Background(), "codemode_approve", map[string]any{"executionId": id})
				if err != nil {
					t.Errorf("%s: approve: %v", r.name, err)
				}
				results[k], errs[k] = out, isErr
			}()
		}
		close(start)
		wg.Wait()
		completed := 0
		for k := range results {
			if !errs[k] && results[k]["status"] == "completed" {
				completed++
			}
		}
		if i == 0 {
			t.Logf("round 0: A answered %v (error %v); B answered %v (error %v)", results[0], errs[0], results[1], errs[1])
		}
		if completed != 1 {
			t.Errorf("run %d: %d approvals finished it, want exactly 1: A %v (error %v), B %v (error %v)", i, completed, results[0], errs[0], results[1], errs[1])
		}
	}
	got := tm.effects()
	for i := range runs {
		if n := got[fmt.Sprintf("race%d", i)]; n != 1 {
			t.Errorf("race%d happened %d times, want exactly once", i, n)
		}
	}
	if len(got) != runs {
		t.Errorf("%d distinct side effects, want %d: %v", len(got), runs, got)
	}
}

// Replica A is killed with SIGKILL in the middle of a run that makes
// side-effecting calls; B, which has run nothing, recovers the run within
// the lease: it ends error (interrupted), and every side effect that
// happened downstream is in its log.
func TestKilledReplicaIsRecoveredByAnother(t *testing.T) {
	tm := newTeam(t)
	a, b := tm.start("A"), tm.start("B")
	code := `async () => { for (let i = 0; i < 100000; i++) { await fx.counter({ name: "k" + i }); } }`
	go func() { _, _, _ = a.callRaw(context.Background(), "codemode", map[string]any{"code": code}) }()
	fixture.Until(t, "A made 50 calls", func() bool { return len(tm.effects()) >= 50 })
	a.kill()
	killed := time.Now()
	var id string
	for {
		list, _ := b.call("codemode_executions", map[string]any{})
		id, _ = firstExecution(list)
		if id != "" {
			r := tm.show(id)
			if r.Status == "error" {
				if !strings.Contains(r.Error, "interrupted") {
					t.Errorf("recovered with error %q, want it to say interrupted", r.Error)
				}
				took := time.Since(killed)
				t.Logf("B recovered A's run %s %v after the kill (lease %v)", id, took.Round(time.Millisecond), lease)
				if took > lease {
					t.Errorf("recovery took %v, more than the lease %v", took, lease)
				}
				t.Logf("log: %d entries; %d side effects downstream", len(r.Log), len(tm.effects()))
				logged := map[string]bool{}
				for _, e := range r.Log {
					var args struct{ Name string }
					_ = json.Unmarshal(e.Args, &args)
					logged[args.Name] = true
				}
				for name := range tm.effects() {
					if !logged[name] {
						t.Errorf("side effect %s happened but is not in the log", name)
					}
				}
				return
			}
			if r.Status != "running" {
				t.Fatalf("A's run is %s (%s), want running then error", r.Status, r.Error)
			}
		}
		if time.Since(killed) > 3*lease {
			t.Fatalf("B did not recover A's run within %v\nB's stderr:\n%s", 3*lease, b.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// firstExecution returns the id of the newest execution in a
// codemode_executions answer.
func firstExecution(list map[string]any) (string, bool) {
	execs, _ := list["executions"].([]any)
	if len(execs) == 0 {
		return "", false
	}
	e, _ := execs[0].(map[string]any)
	id, _ := e["executionId"].(string)
	return id, id != ""
}
