package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/backoff"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// echo calls the fixture's echo tool and fails the test unless it answers.
func echo(t *testing.T, c *Connector, msg string) {
	t.Helper()
	got, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"`+msg+`"}`))
	if err != nil {
		t.Fatalf("Call(echo): %v", err)
	}
	if string(got.Value) != `"`+msg+`"` {
		t.Fatalf("Call(echo) = %s, want %q", got.Value, msg)
	}
}

// The call in flight when a stdio server exits gets a clear error; the next
// call starts a new process and succeeds; the dead one is reaped.
func TestCrashRestartsOnNextCall(t *testing.T) {
	var restarts atomic.Int32
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), OnRestart: func() { restarts.Add(1) }})
	first := childPID(t, c)
	_, err := c.Call(context.Background(), "crash", nil)
	const want = "fx: the MCP server exited (status 3) during crash; it will be restarted on the next call"
	if err == nil || err.Error() != want {
		t.Fatalf("Call(crash) error = %v\nwant %s", err, want)
	}
	if !errors.Is(err, ErrDisconnected) {
		t.Errorf("Call(crash) error does not wrap ErrDisconnected")
	}
	if s := processState(t, first); s != "" {
		t.Errorf("crashed child state = %q, want reaped", s)
	}
	start := time.Now()
	echo(t, c, "back")
	t.Logf("the next call took %v (restart delay %v)", time.Since(start).Round(time.Millisecond), backoff.DefaultFirst)
	if second := childPID(t, c); second == first {
		t.Errorf("the server was not restarted: pid %d", second)
	}
	echo(t, c, "again") // the new session is kept
	if n := restarts.Load(); n != 1 {
		t.Errorf("OnRestart was called %d times, want once (the first session is no restart)", n)
	}
}

// A stdio server that dies between calls is started again, and the next
// call succeeds without an error: nothing was in flight.
func TestExitBetweenCallsIsTransparent(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), RestartDelay: 50 * time.Millisecond})
	pid := childPID(t, c)
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	<-s.proc.exited // noticed without any call
	echo(t, c, "hello")
	if childPID(t, c) == pid {
		t.Error("no new process")
	}
}

// Consecutive failures back off: each restart waits the delay of the
// failures counted, RestartDelay doubling up to MaxRestartDelay (which the
// backoff's own test shows); a session that stays up twice MaxRestartDelay
// resets the count.
func TestRestartBackoff(t *testing.T) {
	// MaxRestartDelay is far longer than a session of this test lasts
	// even on a loaded machine (a start, an echo and a crash), so that
	// none is taken for a healthy one, which would reset the count; the
	// healthy one is made so by moving its start back.
	const delay, maxDelay = 100 * time.Millisecond, time.Minute
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), RestartDelay: delay, MaxRestartDelay: maxDelay})
	if want := (backoff.Policy{First: delay, Max: maxDelay}); c.backoff != want {
		t.Fatalf("backoff = %+v, want %+v", c.backoff, want)
	}
	// The restart waits (from below: a slow machine only makes it longer)
	// the delay of the failures counted.
	crashThenEcho := func(failures int, want time.Duration) {
		t.Helper()
		if _, err := c.Call(context.Background(), "crash", nil); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("Call(crash) = %v", err)
		}
		start := time.Now()
		echo(t, c, "x")
		if got := time.Since(start); got < want*7/10 {
			t.Errorf("restart took %v, want about %v", got.Round(time.Millisecond), want)
		}
		c.mu.RLock()
		n := c.failures
		c.mu.RUnlock()
		if n != failures || c.backoff.Delay(n) != want {
			t.Errorf("%d failures counted (a delay of %v), want %d (%v)", n, c.backoff.Delay(n), failures, want)
		}
	}
	for i, want := range []time.Duration{delay, 2 * delay, 4 * delay} {
		crashThenEcho(i+1, want)
	}
	// A healthy period: the live session started twice the maximum delay
	// ago, as far as the count is concerned.
	c.mu.Lock()
	c.sess.started = c.sess.started.Add(-2 * maxDelay)
	c.mu.Unlock()
	crashThenEcho(1, delay)
}

// A server that cannot be started again fails the call with its reason and
// stderr; once it can, a later call starts it.
func TestRestartFailure(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	broken := filepath.Join(dir, "broken")
	body := "#!/bin/sh\nif [ -e '" + broken + "' ]; then echo 'cannot start: broken' >&2; exit 1; fi\nexec '" + fixture.MCPServer(t) + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c := dial(t, Config{Name: "fx", Command: script, RestartDelay: 50 * time.Millisecond})
	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), "crash", nil); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Call(crash) = %v", err)
	}
	_, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"x"}`))
	if err == nil {
		t.Fatal("Call succeeded while the server cannot start")
	}
	for _, want := range []string{"fx: the MCP server could not be started again", "exited with status 1", "cannot start: broken", "it will be tried again on the next call"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	echo(t, c, "fixed")
}

// After a restart the tools are listed again; a change is logged as a
// warning and reported through OnToolsChanged.
func TestToolsChangedAfterRestartAreReported(t *testing.T) {
	rec := &recorder{}
	var changes atomic.Int32
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), RestartDelay: 10 * time.Millisecond,
		Logger: slog.New(rec), OnToolsChanged: func() { changes.Add(1) }})
	if _, err := c.Call(context.Background(), "add-tool", json.RawMessage(`{"name":"extra"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := changes.Load()
	if _, err := c.Call(context.Background(), "crash", nil); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Call(crash) = %v", err)
	}
	echo(t, c, "x")
	if _, err := c.Call(context.Background(), "extra", nil); err == nil {
		t.Error("the tool of the old process is still callable")
	}
	if changes.Load() == before {
		t.Error("OnToolsChanged was not called")
	}
	warns := rec.find(func(r map[string]string) bool { return strings.Contains(r["msg"], "tools changed") })
	if len(warns) != 1 || warns[0]["removed"] != "[extra]" || warns[0]["level"] != "WARN" {
		t.Errorf("warnings about changed tools: %v", warns)
	}
}

// httpFixture runs the fixture server on a fixed loopback address, so it
// can be killed and started again where the connector expects it.
type httpFixture struct {
	t    *testing.T
	addr string
	sse  bool
	cmd  *exec.Cmd
	done chan struct{}
}

func newHTTPFixture(t *testing.T, sse bool) *httpFixture {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &httpFixture{t: t, addr: ln.Addr().String(), sse: sse}
	ln.Close()
	f.start()
	t.Cleanup(f.kill)
	return f
}

func (f *httpFixture) url() string {
	if f.sse {
		return "http://" + f.addr + "/sse"
	}
	return "http://" + f.addr + "/mcp"
}

func (f *httpFixture) start() {
	f.t.Helper()
	args := []string{"-http", f.addr}
	if f.sse {
		args = append(args, "-sse")
	}
	cmd := exec.Command(fixture.MCPServer(f.t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.cmd, f.done = cmd, make(chan struct{})
	listening := make(chan struct{})
	go func() {
		defer close(f.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "listening on ") {
				close(listening)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	ctx, cancel := fixture.WithDeadline(f.t, context.Background())
	defer cancel()
	select {
	case <-listening:
	case <-f.done:
		_ = cmd.Wait()
		f.t.Fatal("the fixture exited before listening")
	case <-ctx.Done():
		f.kill()
		f.t.Fatal("the fixture did not listen by the test's deadline")
	}
}

// kill stops the fixture at once, as a crash would.
func (f *httpFixture) kill() {
	if f.cmd == nil {
		return
	}
	_ = f.cmd.Process.Kill()
	<-f.done
	_ = f.cmd.Wait()
	f.cmd = nil
}

// A remote server that goes away fails the call in flight with a clear
// error; once it is back, the next call reconnects.
func TestRemoteServerReconnects(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "http"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			f := newHTTPFixture(t, sse)
			c := dial(t, Config{Name: "fx", URL: f.url(), SSE: sse, RestartDelay: 10 * time.Millisecond})
			echo(t, c, "before")

			// The server dies during a call.
			errc := make(chan error, 1)
			started := make(chan struct{})
			var once sync.Once
			ctx := connectors.WithCallHook(context.Background(), &connectors.CallHook{OnProgress: func(string) { once.Do(func() { close(started) }) }})
			go func() {
				_, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":20000}`))
				errc <- err
			}()
			<-started // the server works on the call
			f.kill()
			if err := fixture.Wait(t, "the end of the call in flight when the server died", errc); !errors.Is(err, ErrDisconnected) ||
				!strings.Contains(err.Error(), "fx: the connection to the MCP server failed during slow") ||
				!strings.Contains(err.Error(), "it will reconnect on the next call") {
				t.Errorf("in-flight call error = %v", err)
			}

			// While it is down, calls fail and say so.
			if _, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"x"}`)); err == nil ||
				!strings.Contains(err.Error(), "fx: the MCP server could not be reconnected") {
				t.Errorf("call while down = %v", err)
			}

			f.start()
			echo(t, c, "after")
		})
	}
}

// TestStartThatDiesAtOnceBacksOff: a stdio server that answers
// initialize and exits, every time. Each start fails listing the tools;
// the connector starts it again in the background, each wait longer (the
// failures counted one more each time) up to MaxRestartDelay, and logs a
// bounded number of lines per start.
func TestStartThatDiesAtOnceBacksOff(t *testing.T) {
	script := filepath.Join(t.TempDir(), "server.sh")
	body := `#!/bin/sh
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"brief","version":"1"}}}\n' "$id"
      exit 0;;
    *'"id":'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$id";;
  esac
done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	const first, most = 10 * time.Millisecond, 40 * time.Millisecond
	c := open(t, Config{Name: "brief", Command: script, RestartDelay: first, MaxRestartDelay: most, Logger: slog.New(rec)})
	if c.Down() == nil {
		t.Fatal("the server came up")
	}
	waiting := func(r map[string]string) bool { return r["msg"] == "waiting before the MCP server is started again" }
	const starts = 6
	from := 0
	for want := 1; want <= starts; want++ {
		rec.await(t, from, waiting)
		rec.mu.Lock()
		for !waiting(rec.records[from]) {
			from++
		}
		r := rec.records[from]
		from++
		rec.mu.Unlock()
		if r["failures"] != strconv.Itoa(want) {
			t.Fatalf("wait %d counts %s failures, want %d", want, r["failures"], want)
		}
		if d, err := time.ParseDuration(r["delay"]); err != nil || d > most {
			t.Errorf("wait %d of %s, want at most %v", want, r["delay"], most)
		}
	}
	// Per start: connected and the process stopped (debug), why it
	// failed (a warning) and the wait (info).
	if per := float64(from) / starts; per > 4 {
		t.Errorf("%d log lines for %d starts, want at most 4 a start: %v", from, starts, rec.records[:from])
	}
}
