//go:build unix

package mcp

import (
	"context"
	"log/slog"
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
