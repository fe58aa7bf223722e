package runtime_test

import (
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
)

// A misspelt method after a call with a side effect is reported before
// that call runs, naming the method meant; nothing is called or logged.
func TestCheckBeforeRunningMisspeltMethod(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
  await fx.counter({ name: "x" });
  return await fx.get_summ({ a: 1, b: 2 });
}`, nil)
	mustStatus(t, o, codemode.StatusError)
	want := "- line 3:19: fx.get_summ is not a method of fx; nearest: get_sum"
	if !strings.Contains(o.Error, "checked before running") || !strings.Contains(o.Error, want) {
		t.Errorf("error %q, want it to contain %q", o.Error, want)
	}
	if n := e.effectCount("x"); n != 0 {
		t.Errorf("fx.counter ran %d times", n)
	}
	if log := e.log(o.ExecutionID); len(log) != 0 {
		t.Errorf("log %v, want nothing logged", log)
	}
}

// Every problem is reported at once, in source order, with line:col in
// the model's own source (TypeScript here), for arguments too.
func TestCheckBeforeRunningReportsEveryProblem(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	code := "```ts\n" + `async (): Promise<number> => {
  const key: string = "k" + String(Date.now());
  await kv.put({ key, valeu: "v" });
  await kv.put({ key: 1, value: "v" });
  await kv.get({ key });
  await kv.gte({ key });
  return (await fx.get_sum({ a: "1", b: 2 })) as number;
}
` + "```"
	o := e.run(code, nil)
	mustStatus(t, o, codemode.StatusError)
	for _, want := range []string{
		"has 5 problems; nothing was run",
		`- line 4:16: kv.put: at (root): missing property "value"`,
		`- line 4:23: kv.put: at (root): additional property "valeu" not allowed; did you mean "value"?`,
		"- line 5:23: kv.put: at /key: got number, want string",
		"- line 7:12: kv.gte is not a method of kv; nearest: get",
		"- line 8:33: fx.get_sum: at /a: got string, want number",
	} {
		if !strings.Contains(o.Error, want) {
			t.Errorf("error lacks %q:\n%s", want, o.Error)
		}
	}
	if strings.Index(o.Error, "line 4:16") > strings.Index(o.Error, "line 8:33") {
		t.Errorf("problems out of source order:\n%s", o.Error)
	}
	if n := e.kv.count("put") + e.kv.count("get"); n != 0 {
		t.Errorf("kv was called %d times", n)
	}
}

// Names the program declares itself, dynamic arguments and arguments that
// fit are left alone.
func TestCheckBeforeRunningLeavesValidProgramsAlone(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	o := e.run(`async () => {
  const local = { get_summ: (x) => x.a };
  const args = { a: 1, b: 2 };
  const spread = { ...args };
  const s1 = await fx.get_sum(args);
  const s2 = await fx.get_sum({ ...spread });
  const s3 = await fx.get_sum({ a: 40, b: s1 - 1 });
  return [local.get_summ({ a: 5 }), s1, s2, s3];
}`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if got := string(o.Result); got != "[5,3,3,42]" {
		t.Errorf("result %s", got)
	}
	// A connector the program shadows is the program's own.
	o = e.run(`async () => { const fx = { get_summ: () => 7 }; return fx.get_summ(); }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
}

// A connector in a namespace (ns.kv) is checked like any other.
func TestCheckBeforeRunningNamespaces(t *testing.T) {
	e := newEnv(t, setup{noKV: true, extra: []catalog.Source{{Connector: newKV("ns.kv")}}})
	o := e.run(`async () => await ns.kv.gte({ key: "k" })`, nil)
	mustStatus(t, o, codemode.StatusError)
	if want := "- line 1:25: ns.kv.gte is not a method of ns.kv; nearest: get"; !strings.Contains(o.Error, want) {
		t.Errorf("error %q, want it to contain %q", o.Error, want)
	}
	o = e.run(`async () => await ns.kv.get({ key: 1 })`, nil)
	mustStatus(t, o, codemode.StatusError)
	if want := "ns.kv.get: at /key: got number, want string"; !strings.Contains(o.Error, want) {
		t.Errorf("error %q, want it to contain %q", o.Error, want)
	}
	mustStatus(t, e.run(`async () => await ns.kv.add({ key: "k", value: "v" })`, nil), codemode.StatusCompleted)
}
