package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
)

// logBuffer is a log destination safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Values that came from the environment are secrets wherever they stand:
// a stdio server's argument that the server echoes in its error, and a
// URL's path that a connection error quotes, reach neither the program,
// nor the runtime's view of the connectors (the tool description's
// source), nor the start-up warnings, nor the log.
func TestSecretsFromTheEnvironmentInArgsAndPaths(t *testing.T) {
	const argSecret, pathSecret = "arg-secret-6f1d0c", "path-secret-9b3e27"
	t.Setenv("CM_TEST_ARG_SECRET", argSecret)
	t.Setenv("CM_TEST_PATH_SECRET", pathSecret)
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	// A server that refuses its argument, quoting it, as servers do.
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"fatal: bad argument $1\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n" +
		"  fx:\n    command: " + strconv.Quote(script) + "\n    args: [\"--key=${CM_TEST_ARG_SECRET}\"]\n" +
		"  remote:\n    url: \"http://127.0.0.1:1/${CM_TEST_PATH_SECRET}/mcp\"\n"
	cfg, err := config.Parse([]byte(yaml), filepath.Join(dir, "codemode.yaml"))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &logBuffer{}
	a, err := Open(context.Background(), cfg, Options{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	var seen []string
	for _, name := range []string{"fx", "remote"} {
		o, err := a.Runtime.Execute(context.Background(), "async () => await "+name+".anything({})", nil)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if o.Status != codemode.StatusError || !strings.Contains(o.Error, "connector "+name+" is unavailable") {
			t.Errorf("program calling %s: %s %q; want an error saying it is unavailable", name, o.Status, o.Error)
		}
		b, _ := json.Marshal(o)
		seen = append(seen, "outcome: "+string(b))
	}
	for _, ci := range a.Runtime.Connectors() {
		seen = append(seen, "connector "+ci.Name+": "+ci.Error)
	}
	seen = append(seen, "warnings: "+strings.Join(a.Warnings, "\n"))
	seen = append(seen, "log: "+logs.String())
	if !strings.Contains(strings.Join(seen, "\n"), "fatal: bad argument") {
		t.Fatalf("the server's error is quoted nowhere, so this test shows nothing:\n%s", strings.Join(seen, "\n"))
	}
	for _, s := range seen {
		for _, secret := range []string{argSecret, pathSecret} {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds a secret from the environment:\n%s", strings.SplitN(s, ":", 2)[0], s)
			}
		}
	}
}
