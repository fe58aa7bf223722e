package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// silentScript writes a stdio server that reads its input and never
// answers.
func silentScript(t *testing.T) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "silent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nwhile read -r line; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// silentListener accepts connections and never reads from or writes to
// them, until the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// A server that starts and never answers does not hold Open: past
// StartTimeout Open returns the connector down, saying how far the start
// got, with a warning naming the connector and the deadline; calls fail at
// once, and Close stops the start (goleak checks nothing is left).
func TestOpenDoesNotWaitForASilentServer(t *testing.T) {
	cases := []struct {
		name   string
		config func(t *testing.T) Config
		phase  string
	}{
		{"stdio", func(t *testing.T) Config { return Config{Command: silentScript(t)} }, "initialising"},
		{"http", func(t *testing.T) Config { return Config{URL: silentListener(t)} }, "initialising"},
		{"sse", func(t *testing.T) Config {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := newHangingSSEServer(ln)
			t.Cleanup(func() { srv.Close() })
			return Config{URL: "http://" + ln.Addr().String() + "/sse", SSE: true}
		}, "connecting"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := tc.config(t)
			cfg.Name, cfg.StartTimeout, cfg.Logger = "slow", 300*time.Millisecond, slog.New(rec)
			c, err := Open(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			want := "timed out after 300ms " + tc.phase
			if err := c.Down(); err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Down() = %v, want %q", err, want)
			}
			if tools, err := c.Tools(context.Background()); err == nil || err.Error() != want || len(tools) != 0 {
				t.Errorf("Tools() = %v, %v; want no tools and %q", tools, err, want)
			}
			_, err = c.Call(context.Background(), "echo", json.RawMessage(`{}`))
			if err == nil || err.Error() != "slow: the MCP server is unavailable ("+want+"); it is still starting and joins when it answers" {
				t.Errorf("Call while it starts: %v", err)
			}
			warned := rec.find(func(r map[string]string) bool {
				return r["level"] == "WARN" && r["connector"] == "slow" && r["start_timeout"] == "300ms" && r["during"] == tc.phase
			})
			if len(warned) != 1 {
				t.Errorf("want one warning naming the connector, the deadline and the phase; got %v", rec.find(func(map[string]string) bool { return true }))
			}
		})
	}
}

// A server that answers the handshake but not tools/list times out
// listing its tools.
func TestOpenNamesTheListingPhase(t *testing.T) {
	f, url := startFake(t, nil, nil)
	f.hang = "tools/list"
	c := open(t, Config{Name: "slow", URL: url, StartTimeout: 300 * time.Millisecond})
	if err := c.Down(); err == nil || err.Error() != "timed out after 300ms listing tools" {
		t.Fatalf("Down() = %v", err)
	}
}
