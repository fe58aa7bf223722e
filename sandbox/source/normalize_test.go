package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
		{"dynamic import", "const y = 1;\nconst m = await import('fs');\nm", 2, 17, "import() is not supported: connectors are globals"},
		{"unicode before error", "const s = 'héllo😀'; +* 1", 1, 23, ""},
		{"rejected by goja, not esbuild", "const r = 1;\nconst x = /a/d;\nx", 2, 11, "Invalid flags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Normalize(tc.code, ProgramFile)
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
		n, err := Normalize(code, ProgramFile)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Normalize(%q): error %v is not a *SyntaxError", code, err)
			}
			return
		}
		if n.program == nil {
			t.Fatalf("Normalize(%q): no program", code)
		}
	})
}
