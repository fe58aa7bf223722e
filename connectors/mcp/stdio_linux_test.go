//go:build linux

package mcp

import (
	"context"
	"fmt"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// TestStdioLineSplitByAnInterruptedRead checks that a line the watcher was
// reading when a call began (and made it step aside) reaches the caller
// whole.
func TestStdioLineSplitByAnInterruptedRead(t *testing.T) {
	p := newScriptedPeer(t)
	got := make(chan string, 4)
	p.tr.SetNotificationHandler(func(n mcpgo.JSONRPCNotification) { got <- n.Method })
	// Half a notification while idle: the watcher reads it and waits.
	if _, err := p.out.WriteString(`{"jsonrpc":"2.0","method":"notifications/`); err != nil {
		t.Fatal(err)
	}
	p.drained() // the watcher took the half line
	ans := p.callAsync(context.Background(), `{}`)
	req := p.next()
	p.send(`first"}`, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"ok":1}}`, idJSON(t, req)))
	if a := <-ans; a.err != nil || string(a.reply.result) != `{"ok":1}` {
		t.Fatalf("call = %s, %v", a.reply.result, a.err)
	}
	if m := fixture.Wait(t, "the split notification", got); m != "notifications/first" {
		t.Fatalf("notification = %q, want the line joined across the interrupted read", m)
	}
	// A notification after the call is read by the watcher again.
	p.send(`{"jsonrpc":"2.0","method":"notifications/second"}`)
	if m := fixture.Wait(t, "a notification between calls", got); m != "notifications/second" {
		t.Fatalf("notification = %q", m)
	}
}

// drained waits until the transport has read everything written to the
// "child's stdout" (the pipe holds no byte: TIOCINQ, which is FIONREAD).
func (p *scriptedPeer) drained() {
	p.t.Helper()
	rc, err := p.outR.SyscallConn()
	if err != nil {
		p.t.Fatal(err)
	}
	fixture.Until(p.t, "the transport read every byte in the pipe", func() bool {
		var n int
		var ierr error
		if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
			p.t.Fatal(err)
		}
		if ierr != nil {
			p.t.Fatalf("bytes in the pipe: %v", ierr)
		}
		return n == 0
	})
}
