package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// processState returns the state letter of pid from /proc ("" when there
// is no such process).
func processState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatalf("read /proc/%d/stat: %v", pid, err)
	}
	// pid (comm) state ...; comm may contain spaces, so cut at the last ')'.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	return strings.Fields(rest)[0]
}

// childPID returns the pid of a stdio connector's child.
func childPID(t *testing.T, c *Connector) int {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.sess == nil || c.sess.proc == nil {
		t.Fatal("connector has no child process")
	}
	return c.sess.proc.pid()
}

func TestCloseReapsTheChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	var logs fixture.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := Dial(context.Background(), Config{Name: "fx", Command: fixture.MCPServer(t), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	pid := childPID(t, c)
	if s := processState(t, pid); s == "" || s == "Z" {
		t.Fatalf("child state before Close = %q, want running", s)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The fixture exits on stdin EOF, before the SIGTERM grace period.
	if strings.Contains(logs.String(), "SIGTERM") {
		t.Errorf("Close signalled the server rather than let it exit on EOF:\n%s", logs.String())
	}
	if s := processState(t, pid); s != "" {
		t.Errorf("child state after Close = %q, want no process (reaped)", s)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"x"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if _, err := c.Tools(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Tools after Close = %v, want ErrClosed", err)
	}
	if err := c.Refresh(context.Background()); err == nil {
		t.Error("Refresh after Close succeeded")
	}
}

// A server that ignores stdin EOF and SIGTERM, never answers, and has a
// grandchild: Dial gives up at its deadline, Close escalates to SIGKILL, and
// the process group kill takes the grandchild too. It takes the full
// escalation, about 5 s.
func TestStubbornServerIsKilled(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "stubborn.sh")
	body := `#!/bin/sh
trap '' TERM
echo "stubborn server starting" >&2
sleep 1000 &
echo $! > "$1/grandchild"
echo $$ > "$1/child"
while :; do sleep 0.1; done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Dial must give up at ctx's deadline: the server never answers.
	_, err := Dial(ctx, Config{Name: "stubborn", Command: script, Args: []string{dir}, Logger: testLogger(t)})
	if err == nil {
		t.Fatal("Dial succeeded against a server that never answers")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial error = %v, want DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "stubborn server starting") {
		t.Errorf("Dial error does not carry the server's stderr: %v", err)
	}
	for _, name := range []string{"child", "grandchild"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		// The child is ours to reap. The grandchild is reparented, so it may
		// linger as a zombie if nobody reaps orphans here, and SIGKILL takes
		// effect asynchronously; but it must stop running.
		if name == "child" {
			if s := processState(t, pid); s != "" {
				t.Errorf("child state = %q, want reaped", s)
			}
			continue
		}
		fixture.Until(t, "the grandchild is killed", func() bool {
			s := processState(t, pid)
			return s == "" || s == "Z"
		})
	}
}

func TestDialErrors(t *testing.T) {
	bin := fixture.MCPServer(t)
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()

	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no source", Config{Name: "x"}, "one of command or url is required"},
		{"both", Config{Name: "x", Command: bin, URL: "http://127.0.0.1:1/mcp"}, "mutually exclusive"},
		{"bad name", Config{Name: "my-server", Command: bin}, "not a valid JavaScript identifier"},
		{"reserved name", Config{Name: "codemode", Command: bin}, "reserved"},
		{"missing command", Config{Name: "x", Command: "/nonexistent/mcp-server"}, "/nonexistent/mcp-server"},
		{"exits at once", Config{Name: "x", Command: bin, Args: []string{"-no-such-flag"}}, "flag provided but not defined"},
		{"nothing listening", Config{Name: "x", URL: deadURL}, "connection refused"},
		{"nothing listening sse", Config{Name: "x", URL: deadURL, SSE: true}, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := fixture.WithDeadline(t, context.Background())
			defer cancel()
			tt.cfg.Logger = testLogger(t)
			c, err := Dial(ctx, tt.cfg)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Dial error %q, want it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), `"x"`) && !strings.Contains(err.Error(), tt.cfg.Name) {
				t.Errorf("Dial error %q does not name the connector", err)
			}
		})
	}
}

func TestDialCancelledDuringSSEHandshake(t *testing.T) {
	// A server that accepts the SSE stream but never sends the endpoint.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHangingSSEServer(ln)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// Dial must give up at ctx's deadline: the endpoint never comes.
	_, err = Dial(ctx, Config{Name: "x", URL: "http://" + ln.Addr().String() + "/sse", SSE: true, Logger: testLogger(t)})
	if err == nil {
		t.Fatal("Dial succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial error = %v, want DeadlineExceeded", err)
	}
}
