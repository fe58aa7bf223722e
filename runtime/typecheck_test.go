package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// typeChecker is a runtime.TypeChecker whose answer a function decides.
type typeChecker struct {
	check func(code, decls string) ([]string, error)
}

func (tc typeChecker) Check(_ context.Context, code, decls string) ([]string, error) {
	return tc.check(code, decls)
}

// With a type checker, a program with type errors is refused before an
// execution exists: nothing runs, nothing is stored. The checker gets the
// declarations of every connector and of codemode.
func TestTypeCheckRefusesBeforeAnythingIsStored(t *testing.T) {
	var gotDecls string
	tc := typeChecker{check: func(code, decls string) ([]string, error) {
		gotDecls = decls
		if strings.Contains(code, "bad") {
			return []string{"line 1:20: Property 'bad' does not exist (TS2339)", "line 2:1: another (TS1)"}, nil
		}
		return nil, nil
	}}
	e := newEnv(t, setup{mcp: true, typeCheck: tc})
	o := e.run(`async () => (await kv.get({ key: "k" })).bad`, nil)
	mustStatus(t, o, codemode.StatusError)
	want := "the program has 2 type errors (sandbox.typecheck); nothing was run:\n- line 1:20: Property 'bad' does not exist (TS2339)\n- line 2:1: another (TS1)"
	if o.Error != want || o.ExecutionID != "" {
		t.Errorf("outcome %+v, want error %q and no execution", o, want)
	}
	for _, w := range []string{"declare const kv: {", "declare const fx: {", "declare const codemode: {"} {
		if !strings.Contains(gotDecls, w) {
			t.Errorf("declarations lack %q", w)
		}
	}
	if n := e.kv.count("get"); n != 0 {
		t.Errorf("kv.get ran %d times", n)
	}
	if list, err := e.store.ListExecutions(e.ctx, codemode.ExecutionFilter{}); err != nil || len(list) != 0 {
		t.Errorf("executions %v, %v; want none stored", list, err)
	}
	mustStatus(t, e.run(`async () => (await kv.get({ key: "k" })).value ?? null`, nil), codemode.StatusCompleted)

	// A checker that fails refuses the program too, saying so.
	e2 := newEnv(t, setup{typeCheck: typeChecker{check: func(string, string) ([]string, error) { return nil, errors.New("tsc crashed") }}})
	o = e2.run(`async () => 1`, nil)
	if o.Status != codemode.StatusError || !strings.Contains(o.Error, "the type check (sandbox.typecheck) failed; nothing was run: tsc crashed") {
		t.Errorf("outcome %+v", o)
	}
}
