package runtime

import (
	"encoding/json"
	"errors"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"b":1,"a":{"d":[1,2],"c":null}}`, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{" {\n \"a\" : 1.50 } ", `{"a":1.50}`},
		{`{"big":12345678901234567890}`, `{"big":12345678901234567890}`},
		{`"x"`, `"x"`},
	}
	for _, tc := range tests {
		got, err := canonicalJSON(json.RawMessage(tc.in))
		if err != nil {
			t.Errorf("canonicalJSON(%q): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("canonicalJSON(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `nope`} {
		if _, err := canonicalJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("canonicalJSON(%q) accepted invalid JSON", bad)
		}
	}
}

func TestUserErrors(t *testing.T) {
	err := wrongState("execution %s is %s; only a paused execution can be approved", "exec_1", codemode.StatusCompleted)
	if !errors.Is(err, codemode.ErrWrongState) || err.Error() != "execution exec_1 is completed; only a paused execution can be approved" {
		t.Errorf("wrongState = %q (is ErrWrongState: %v)", err, errors.Is(err, codemode.ErrWrongState))
	}
	if err := unknownExecution("x"); !errors.Is(err, codemode.ErrUnknownExecution) || err.Error() != `unknown execution "x"` {
		t.Errorf("unknownExecution = %q (is ErrUnknownExecution: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownExecution))
	}
	if err := unknownSnippet("s"); !errors.Is(err, codemode.ErrUnknownSnippet) || err.Error() != `unknown snippet "s"` {
		t.Errorf("unknownSnippet = %q (is ErrUnknownSnippet: %v); the engine names no surface's tool or command", err, errors.Is(err, codemode.ErrUnknownSnippet))
	}
}
