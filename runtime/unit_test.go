package runtime

import (
	"errors"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestUserErrors(t *testing.T) {
	err := wrongState("execution %s %s; only a paused execution can be approved", "exec_1", inState(codemode.StatusError))
	if !errors.Is(err, codemode.ErrWrongState) || err.Error() != "execution exec_1 ended in an error; only a paused execution can be approved" {
		t.Errorf("wrongState = %q (is ErrWrongState: %v)", err, errors.Is(err, codemode.ErrWrongState))
	}
	// Every status reads as words after "execution X": no "is error", no
	// "is rolled_back".
	for _, s := range codemode.ExecStatuses() {
		if w := inState(s); strings.Contains(w, "_") || w == "is error" || w == "is "+s.String() && s != codemode.StatusRunning && s != codemode.StatusPaused {
			t.Errorf("inState(%s) = %q", s, w)
		}
	}
	if err := unknownExecution("x"); !errors.Is(err, codemode.ErrUnknownExecution) || err.Error() != `unknown execution "x"` {
		t.Errorf("unknownExecution = %q (is ErrUnknownExecution: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownExecution))
	}
}
