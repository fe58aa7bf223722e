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

// A method the program named (a connector that forwards unknown methods
// takes any name) is shown with its hidden characters escaped too: the
// prompt names what runs.
func TestElicitMessageShowsTheMethodAsItRuns(t *testing.T) {
	p := codemode.PendingAction{ExecutionID: "exec_1", Seq: 1, Connector: "files", Method: "read\u202eetirw", Args: json.RawMessage(`{}`)}
	msg, _ := elicitMessage(p)
	if strings.ContainsRune(msg, '\u202e') || !strings.Contains(msg, `Approve files.read\u202Eetirw (execution exec_1, call 1)?`) {
		t.Errorf("message %q shows the method's hidden character as itself", msg)
	}
}
