package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShapes(t *testing.T) {
	tests := []struct {
		name  string
		code  string
		shape Shape
		want  string // the program's value as JSON
	}{
		{"async arrow", "async () => { return 1 + 1 }", ShapeFunction, "2"},
		{"async arrow calling", "async () => {\n  const r = await notes.createNote({ text: 'hi' });\n  return r.args;\n}", ShapeFunction, `{"text":"hi"}`},
		{"arrow without async", "() => { return 'x' }", ShapeFunction, `"x"`},
		{"arrow expression body", "async () => ({ a: 1 })", ShapeFunction, `{"a":1}`},
		{"parenthesised function expression", "(async function () { return 3 })", ShapeFunction, "3"},
		{"helpers then arrow", "const k = 2;\nasync () => k * 21", ShapeFunction, "42"},
		{"named async function", "async function main() {\n  return 'main'\n}", ShapeNamedFunction, `"main"`},
		{"named function", "function run() { return 7 }", ShapeNamedFunction, "7"},
		{"main among functions", "async function main() { return helper() }\nfunction helper() { return 'h' }", ShapeNamedFunction, `"h"`},
		{"statements, last expression", "const x = await notes.createNote({ a: 1 });\nx.args", ShapeExpression, `{"a":1}`},
		{"single expression", "1 + 1", ShapeExpression, "2"},
		{"object literal", "({ a: [1, 2] })", ShapeExpression, `{"a":[1,2]}`},
		{"sequence", "(1, 2)", ShapeExpression, "2"},
		{"pure comment inside parentheses", "new Date(5).getTime() === 5", ShapeExpression, "true"},
		{"awaited promise", "Promise.resolve(4)", ShapeExpression, "4"},
		{"immediately invoked", "(async () => 9)()", ShapeExpression, "9"},
		{"top-level return", "const a = 5;\nreturn a * 2;", ShapeStatements, "10"},
		{"no value", "const a = 5;", ShapeStatements, "null"},
		{"empty", "", ShapeStatements, "null"},
		{"own input binding", "const input = 3; input", ShapeExpression, "3"},
		{"export default arrow", "export default async () => { return 'd' }", ShapeExportDefault, `"d"`},
		{"export default function", "export default async function main(): Promise<number> {\n  return 11\n}", ShapeExportDefault, "11"},
		{"export default value", "const v = { n: 1 };\nexport default v;", ShapeExportDefault, `{"n":1}`},
		{"export const", "export const x = 4;\nx + 1", ShapeExpression, "5"},
		{"fence js", "```js\nasync () => 1\n```", ShapeFunction, "1"},
		{"fence ts", "```ts\nconst n: number = 2;\nn\n```\n", ShapeExpression, "2"},
		{"fence typescript", "```typescript\nasync (): Promise<string> => 'ts'\n```", ShapeFunction, `"ts"`},
		{"fence javascript", "```javascript\nfunction main() { return 'js' }\n```", ShapeNamedFunction, `"js"`},
		{"bare fence", "\n```\n[1, 2].map(x => x * 2)\n```", ShapeExpression, "[2,4]"},
		{"fence with a fence in a template literal", "```js\nconst md = `\n\\`\\`\\`\ncode\n\\`\\`\\`\n`;\nmd.length\n```", ShapeExpression, "14"},
		{"typescript", `
interface Note { id: string; text: string }
enum Color { Red, Green }
type Pair<T> = [T, T];
function first<T>(xs: T[]): T { return xs[0] }
const p: Pair<number> = [1, 2];
const n = { id: "a", text: "b" } as Note;
class Box<T> { constructor(public value: T) {} }
({ first: first<number>(p), color: Color.Green, id: n.id, box: new Box<string>("x").value })
`, ShapeExpression, `{"first":1,"color":1,"id":"a","box":"x"}`},
		{"async generator and for await", `
async function* gen() { yield 1; yield await Promise.resolve(2); yield 3 }
const out: number[] = [];
for await (const x of gen()) out.push(x);
out`, ShapeExpression, "[1,2,3]"},
		{"class private fields and optional chaining", "class A { #x = 1; get x() { return this.#x } }\nnew A()?.x ?? 0", ShapeExpression, "1"},
	}
	e := newExecutor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Normalize(tc.code)
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if n.Shape != tc.shape {
				t.Errorf("shape %v, want %v\nsource:\n%s", n.Shape, tc.shape, n.Source)
			}
			o := runCode(t, e, &fakeHost{}, tc.code, Limits{})
			wantCompleted(t, tc.code, o, tc.want)
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
			h := &fakeHost{snippet: func(_ context.Context, name string, _ json.RawMessage) (string, error) { return tc.snippet, nil }}
			code := "await codemode.run('s', { n: 21 })"
			wantCompleted(t, code, runCode(t, e, h, code, Limits{}), tc.want)
		})
	}
}

func TestSyntaxErrorPositions(t *testing.T) {
	tests := []struct {
		name       string
		code       string
		line, col  int
		msgContain string
	}{
		{"fenced ts, line 3", "```ts\nconst a: number = 1;\nconst b = a +* 2;\nb\n```", 3, 14, "Unexpected"},
		{"plain js line 2", "const x = 1;\nlet = = 2;", 2, 7, `Unexpected "="`},
		{"unclosed brace at end", "async () => {\n  return 1;\n", 2, 12, "end of file"},
		{"stray closing brace", "const a = 1;\n}\nconst b = 2;", 2, 1, `Unexpected "}"`},
		{"import", "const y = 1;\n  import { x } from 'y';\nx", 2, 3, "import declarations are not supported"},
		{"unicode before error", "const s = 'héllo😀'; +* 1", 1, 23, ""},
		{"rejected by goja, not esbuild", "const r = 1;\nconst x = /a/d;\nx", 2, 11, "Invalid flags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Normalize(tc.code)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Normalize(%q) error %v, want a *SyntaxError", tc.code, err)
			}
			if se.Line != tc.line || se.Column != tc.col {
				t.Errorf("position %d:%d, want %d:%d (%v)", se.Line, se.Column, tc.line, tc.col, se)
			}
			if !strings.Contains(se.Message, tc.msgContain) {
				t.Errorf("message %q does not contain %q", se.Message, tc.msgContain)
			}
			if want := "(line "; !strings.Contains(se.Error(), want) {
				t.Errorf("Error() %q lacks %q", se.Error(), want)
			}
		})
	}
}

func TestSyntaxErrorOutcome(t *testing.T) {
	e := newExecutor(t)
	code := "```ts\nconst a: number = 1;\nconst b = a +* 2;\n```"
	o := runCode(t, e, &fakeHost{}, code, Limits{})
	if o.Status != Failed || !strings.HasPrefix(o.Error, "SyntaxError: ") || !strings.HasSuffix(o.Error, "(line 3:col 14)") {
		t.Fatalf("outcome %v %q, want a SyntaxError at line 3:col 14", o.Status, o.Error)
	}
}

func TestStripFence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1 + 1", "1 + 1"},
		{"```js\n1\n```", "\n1\n"},
		{"  ```ts\na\nb\n```\ntrailing prose", "\na\nb\n\n"},
		{"```\nno closing\n", "\nno closing\n"},
		{"x\n```js\ny\n```", "x\n```js\ny\n```"},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, stripFence(tc.in)); diff != "" {
			t.Errorf("stripFence(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"async () => { return 1 }",
		"```ts\nconst x: number = await a.b({});\nx\n```",
		"export default function main() {}",
		"export default {a: 1}",
		"}{",
		"(/* c */ 1)",
		"import x from 'y'",
		"async function* g() { yield 1 }\nfor await (const x of g()) {}",
		"`${",
		"\u2028x",
		"```",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		n, err := Normalize(code)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Normalize(%q): error %v is not a *SyntaxError", code, err)
			}
			return
		}
		if n.program == nil || n.Source == "" {
			t.Fatalf("Normalize(%q): no program", code)
		}
	})
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
		wantCompleted(t, tc.code, runCode(t, e, &fakeHost{}, tc.code, Limits{}), tc.want)
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
			wantCompleted(t, tc.code, runCode(t, e, &fakeHost{}, tc.code, Limits{}), tc.want)
		})
	}
}

func TestRecoveredExpressionErrorPosition(t *testing.T) {
	// The inserted "return " must not move columns of the last line.
	e := newExecutor(t)
	code := "const a = 1;\n-1, null.x"
	o := runCode(t, e, &fakeHost{}, code, Limits{})
	if o.Status != Failed || !strings.HasSuffix(o.Error, "(line 2:col 10)") {
		t.Errorf("outcome %v %q, want an error at line 2:col 10", o.Status, o.Error)
	}
}
