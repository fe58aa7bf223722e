//go:build unix

package app

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A downstream that starts and does not answer holds start-up only for its
// start timeout (its own start_timeout wins over server.start_timeout):
// Open returns with it unavailable, saying so, and programs run with the
// other connectors; when it answers it joins, and programs call it.
func TestASlowDownstreamJoinsWhenItAnswers(t *testing.T) {
	dir := t.TempDir()
	script, answer := fixture.Late(t)
	yaml := "server:\n  start_timeout: 200ms\n" +
		"store:\n  path: " + strconv.Quote(filepath.Join(dir, "c.db")) + "\n" +
		"sandbox:\n  isolation: inprocess\n" +
		"connectors:\n  fx:\n    command: " + strconv.Quote(fixture.MCPServer(t)) + "\n    start_timeout: 1m\n" +
		"  slow:\n    command: " + strconv.Quote(script) + "\n    start_timeout: 300ms\n"
	a, changed := openWatched(t, dir, yaml)
	const why = "connector slow is unavailable: timed out after 300ms initialising"
	if where := filepath.Join(dir, "codemode.yaml") + ":11: " + why; !slices.Contains(a.Warnings, where) {
		t.Fatalf("warnings %q do not say %q", a.Warnings, where)
	}
	run := func(code string) codemode.Outcome {
		t.Helper()
		o, err := a.Runtime.Execute(context.Background(), code, nil)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		return o
	}
	if o := run(`async () => await fx.get_sum({ a: 2, b: 3 })`); o.Status != codemode.StatusCompleted || string(o.Result) != "5" {
		t.Fatalf("program calling fx while slow starts: %+v", o)
	}
	if o := run(`async () => await slow.get_sum({ a: 2, b: 3 })`); o.Status != codemode.StatusError || !strings.Contains(o.Error, why) {
		t.Fatalf("program calling slow while it starts: %+v", o)
	}

	answer()
	<-changed
	if o := run(`async () => await slow.get_sum({ a: 2, b: 3 })`); o.Status != codemode.StatusCompleted || string(o.Result) != "5" {
		t.Fatalf("program calling slow once it answered: %+v", o)
	}
}
