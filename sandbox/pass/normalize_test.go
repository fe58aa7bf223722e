package pass

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

func TestShapes(t *testing.T) {
	tests := []struct {
		name  string
		code  string
		shape source.Shape
		want  string // the program's value as JSON
	}{
		{"async arrow", "async () => { return 1 + 1 }", source.ShapeFunction, "2"},
		{"async arrow calling", "async () => {\n  const r = await notes.createNote({ text: 'hi' });\n  return r.args;\n}", source.ShapeFunction, `{"text":"hi"}`},
		{"arrow without async", "() => { return 'x' }", source.ShapeFunction, `"x"`},
		{"arrow expression body", "async () => ({ a: 1 })", source.ShapeFunction, `{"a":1}`},
		{"parenthesised function expression", "(async function () { return 3 })", source.ShapeFunction, "3"},
		{"helpers then arrow", "const k = 2;\nasync () => k * 21", source.ShapeFunction, "42"},
		{"named async function", "async function main() {\n  return 'main'\n}", source.ShapeNamedFunction, `"main"`},
		{"named function", "function run() { return 7 }", source.ShapeNamedFunction, "7"},
		{"main among functions", "async function main() { return helper() }\nfunction helper() { return 'h' }", source.ShapeNamedFunction, `"h"`},
		{"statements, last expression", "const x = await notes.createNote({ a: 1 });\nx.args", source.ShapeExpression, `{"a":1}`},
		{"single expression", "1 + 1", source.ShapeExpression, "2"},
		{"object literal", "({ a: [1, 2] })", source.ShapeExpression, `{"a":[1,2]}`},
		{"sequence", "(1, 2)", source.ShapeExpression, "2"},
		{"pure comment inside parentheses", "new Date(5).getTime() === 5", source.ShapeExpression, "true"},
		{"awaited promise", "Promise.resolve(4)", source.ShapeExpression, "4"},
		{"immediately invoked", "(async () => 9)()", source.ShapeExpression, "9"},
		{"top-level return", "const a = 5;\nreturn a * 2;", source.ShapeStatements, "10"},
		{"no value", "const a = 5;", source.ShapeStatements, "null"},
		{"empty", "", source.ShapeStatements, "null"},
		{"own input binding", "const input = 3; input", source.ShapeExpression, "3"},
		{"export default arrow", "export default async () => { return 'd' }", source.ShapeExportDefault, `"d"`},
		{"export default function", "export default async function main(): Promise<number> {\n  return 11\n}", source.ShapeExportDefault, "11"},
		{"export default value", "const v = { n: 1 };\nexport default v;", source.ShapeExportDefault, `{"n":1}`},
		{"export const", "export const x = 4;\nx + 1", source.ShapeExpression, "5"},
		{"fence js", "```js\nasync () => 1\n```", source.ShapeFunction, "1"},
		{"fence ts", "```ts\nconst n: number = 2;\nn\n```\n", source.ShapeExpression, "2"},
		{"fence typescript", "```typescript\nasync (): Promise<string> => 'ts'\n```", source.ShapeFunction, `"ts"`},
		{"fence javascript", "```javascript\nfunction main() { return 'js' }\n```", source.ShapeNamedFunction, `"js"`},
		{"bare fence", "\n```\n[1, 2].map(x => x * 2)\n```", source.ShapeExpression, "[2,4]"},
		{"fence with a fence in a template literal", "```js\nconst md = `\n\\`\\`\\`\ncode\n\\`\\`\\`\n`;\nmd.length\n```", source.ShapeExpression, "14"},
		{"typescript", `
interface Note { id: string; text: string }
enum Color { Red, Green }
type Pair<T> = [T, T];
function first<T>(xs: T[]): T { return xs[0] }
const p: Pair<number> = [1, 2];
const n = { id: "a", text: "b" } as Note;
class Box<T> { constructor(public value: T) {} }
({ first: first<number>(p), color: Color.Green, id: n.id, box: new Box<string>("x").value })
`, source.ShapeExpression, `{"first":1,"color":1,"id":"a","box":"x"}`},
		{"async generator and for await", `
async function* gen() { yield 1; yield await Promise.resolve(2); yield 3 }
const out: number[] = [];
for await (const x of gen()) out.push(x);
out`, source.ShapeExpression, "[1,2,3]"},
		{"class private fields and optional chaining", "class A { #x = 1; get x() { return this.#x } }\nnew A()?.x ?? 0", source.ShapeExpression, "1"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := source.Normalize(tc.code, source.ProgramFile)
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if n.Shape != tc.shape {
				t.Errorf("shape %v, want %v", n.Shape, tc.shape)
			}
			o := sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{})
			sandboxtest.WantCompleted(t, tc.code, o, tc.want)
		})
	}
}

func TestSnippetShapeGetsInput(t *testing.T) {
	tests := []struct {
		name, snippet, want string
	}{
		{"arrow", "async (input) => input.n * 2", "42"},
		{"statements", "const n = input.n;\nn + 1", "22"},
		{"named", "async function main(input) { return input.n - 1 }", "20"},
		{"export default", "export default (input: { n: number }) => input.n", "21"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.Host{OnSnippet: func(_ context.Context, name string, _ json.RawMessage) (string, error) { return tc.snippet, nil }}
			code := "await codemode.run('s', { n: 21 })"
			sandboxtest.WantCompleted(t, code, sandboxtest.Run(t, e, h, code, sandbox.Limits{}), tc.want)
		})
	}
}

func TestSyntaxErrorOutcome(t *testing.T) {
	e := newExecutor(t)
	code := "```ts\nconst a: number = 1;\nconst b = a +* 2;\n```"
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{})
	if o.Status != sandbox.Failed || !strings.HasPrefix(o.Error, "SyntaxError: ") || !strings.HasSuffix(o.Error, "(line 3:14)") {
		t.Fatalf("outcome %v %q, want a source.SyntaxError at line 3:14", o.Status, o.Error)
	}
}

func TestLastExpressionForms(t *testing.T) {
	tests := []struct{ code, want string }{
		{"`t${1}`", `"t1"`},
		{"typeof notes", `"object"`},
		{"!0", "true"},
		{"void 0", "null"},
		{"[1, 2].length", "2"},
		{"(() => 5)()", "5"},
		{"(function () { return 8 })()", "8"},
		{"new (class { v = 3 })().v", "3"},
		{"/a/.test('a')", "true"},
		{"let y = 1; y++", "1"},
		{"let z = 1; z += 2", "3"},
		{"(0, eval)('6')", "6"},
		{"await 1, 2", "2"},
		{"class K {}; typeof K", `"function"`},
		{"({}).toString()", `"[object Object]"`},
		{"/* c */ (/* d */ 1 + /* e */ 2)", "3"},
		{"// line comment\n(1)", "1"},
		{"x => x", "null"},
		{"async x => x ?? 'none'", `"none"`},
		{"async () => (1, 2)", "2"},
		{"(async () => ({ a: (1) }))", `{"a":1}`},
		{"const o = { f() { return 'm' } };\no?.f?.()", `"m"`},
		{"Math.max(...[1, 5, 3])", "5"},
		{"[...`ab`].reverse().join('')", `"ba"`},
		// Expressions esbuild folds into a primitive and would drop.
		{"-1", "-1"},
		{"const a = 1;\n'a' + 1", `"a1"`},
		{"1 === 1", "true"},
		{"enum C { A, B }\nC.B", "1"},
		{"null ?? 'n'", `"n"`},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{}), tc.want)
	}
}

// TestDroppedExpressionRecoveryKeepsMeaning checks the cases where putting
// a return before the last line would change what the program does.
func TestDroppedExpressionRecoveryKeepsMeaning(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"loop body on the last line", "let i = 0;\nwhile (i < 3)\n  i++;", "null"},
		{"loop side effects", "const seen = [];\nfor (const n of [1, 2, 3])\n  seen.push(n);\nreturn seen", "[1,2,3]"},
		{"continued expression", "let x = 5\n  -1\nreturn x", "4"},
		{"comment last", "const v = 1;\n// the end", "null"},
		{"two statements on the last line", "let y = 0; y = 2; -1", "-1"},
		{"typescript tail", "let y: number = 0;\ny = 2 as number;\n-1", "-1"},
		{"dropped in the middle", "let z = 1;\n-1;\nz = 3;\nconst w = 2;", "null"},
		{"template literal", "const s = `a\nb`", "null"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.WantCompleted(t, tc.code, sandboxtest.Run(t, e, &sandboxtest.Host{}, tc.code, sandbox.Limits{}), tc.want)
		})
	}
}

func TestRecoveredExpressionErrorPosition(t *testing.T) {
	// The inserted "return " must not move columns of the last line.
	e := newExecutor(t)
	code := "const a = 1;\n-1, null.x"
	o := sandboxtest.Run(t, e, &sandboxtest.Host{}, code, sandbox.Limits{})
	if o.Status != sandbox.Failed || !strings.HasSuffix(o.Error, "(line 2:10)") {
		t.Errorf("outcome %v %q, want an error at line 2:10", o.Status, o.Error)
	}
}
