package runtime

import (
	"errors"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestUserErrors(t *testing.T) {
	err := wrongState("execution %s is %s; only a paused execution can be approved", "exec_1", codemode.StatusCompleted)
	if !errors.Is(err, codemode.ErrWrongState) || err.Error() != "execution exec_1 is completed; only a paused execution can be approved" {
		t.Errorf("wrongState = %q (is ErrWrongState: %v)", err, errors.Is(err, codemode.ErrWrongState))
	}
	if err := unknownExecution("x"); !errors.Is(err, codemode.ErrUnknownExecution) || err.Error() != `unknown execution "x"` {
		t.Errorf("unknownExecution = %q (is ErrUnknownExecution: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownExecution))
	}
}
