//go:build unix

package mcp

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A server that answers after StartTimeout joins then: its tools are
// listed, OnToolsChanged is called, an info line says so, and calls work.
func TestALateServerJoinsWhenItAnswers(t *testing.T) {
	script, answer := fixture.Late(t)
	rec := &recorder{}
	joined := make(chan struct{}, 1)
	c := open(t, Config{Name: "late", Command: script, StartTimeout: 300 * time.Millisecond, Logger: slog.New(rec),
		OnToolsChanged: func() { joined <- struct{}{} }})
	if err := c.Down(); err == nil || !strings.HasPrefix(err.Error(), "timed out after 300ms ") {
		t.Fatalf("Down() = %v; want the start timed out", err)
	}
	answer()
	<-joined
	if err := c.Down(); err != nil {
		t.Fatalf("Down() after it answered = %v", err)
	}
	if tools, err := c.Tools(context.Background()); err != nil || len(tools) == 0 {
		t.Fatalf("Tools() after it answered = %v, %v", tools, err)
	}
	echo(t, c, "late")
	if got := rec.find(func(r map[string]string) bool {
		return r["level"] == "INFO" && r["connector"] == "late" && r["msg"] == "the MCP server answered; its tools are available now" && r["after"] != ""
	}); len(got) != 1 {
		t.Errorf("want one info line saying it answered; got %v", rec.find(func(map[string]string) bool { return true }))
	}
}

// A start that outlives StartTimeout and then fails leaves the connector
// down with that failure, and it is started again on the backoff, as a
// server that failed at once would be.
func TestALateServerThatFailsIsRetried(t *testing.T) {
	tried := filepath.Join(t.TempDir(), "tried")
	// The first run fails once let through; the next runs the server.
	script, answer := fixture.GatedScript(t, "[ -e '"+tried+"' ] && exec '"+fixture.MCPServer(t)+"'",
		"touch '"+tried+"'; echo 'cannot start: first try' >&2; exit 3")
	rec := &recorder{}
	up := make(chan struct{}, 1)
	c := open(t, Config{Name: "late", Command: script, StartTimeout: 300 * time.Millisecond, Logger: slog.New(rec),
		RestartDelay: 10 * time.Millisecond, MaxRestartDelay: 10 * time.Millisecond,
		OnToolsChanged: func() { up <- struct{}{} }})
	answer()
	<-up
	if err := c.Down(); err != nil {
		t.Fatalf("Down() after the retry = %v", err)
	}
	echo(t, c, "retried")
	failed := rec.find(func(r map[string]string) bool {
		return r["level"] == "WARN" && r["connector"] == "late" && strings.Contains(r["err"], "cannot start: first try")
	})
	if len(failed) == 0 {
		t.Errorf("no warning gave the late start's failure; got %v", rec.find(func(map[string]string) bool { return true }))
	}
}

// A server that fails to start with its last words on a line it did not
// end has them quoted in the error too.
func TestStartErrorQuotesAnUnendedLine(t *testing.T) {
	_, err := Dial(context.Background(), Config{Name: "fx", Command: "sh", Args: []string{"-c", "echo starting >&2; printf 'fatal: no config' >&2; exit 3"}, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "starting\n  fatal: no config") {
		t.Fatalf("Dial error = %v, want the server's stderr to its last unended line", err)
	}
}
