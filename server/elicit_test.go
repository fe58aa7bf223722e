package server

import (
	"encoding/json"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestElicitMessageShowsArgumentsAsTheyRun(t *testing.T) {
	p := codemode.PendingAction{ExecutionID: "exec_1", Seq: 2, Connector: "files", Method: "write_file",
		Args: json.RawMessage(`{"n":12345678901234567890,"path":"a<b>&c","path":"second","s":"x\u202ey"}`)}
	msg, whole := elicitMessage(p)
	if !whole {
		t.Fatal("short arguments not shown whole")
	}
	for _, want := range []string{
		"Approve files.write_file (execution exec_1, call 2)?",
		`"n": 12345678901234567890`,            // no float rounding
		`"path": "a<b>&c"`, `"path": "second"`, // no HTML escaping; a duplicate key shown as sent
		`"s": "x\u202ey"`, // an escape in the arguments stays an escape
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %s", msg, want)
		}
	}
}
