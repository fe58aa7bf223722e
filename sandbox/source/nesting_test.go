package source

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestNestingBounded: code that nests deeply is refused before esbuild sees
// it, at the first place past MaxNesting, so what normalising costs follows
// the code's size. Each shape here made esbuild's cost grow with the square
// of the depth (indentation, scopes) or recurse as deep.
func TestNestingBounded(t *testing.T) {
	const n = 2000
	tests := []struct {
		name      string
		code      string
		line, col int
	}{
		{"blocks", strings.Repeat("{", n) + strings.Repeat("}", n), 1, MaxNesting + 1},
		{"blocks on lines", strings.Repeat("{\n", n) + strings.Repeat("}\n", n), MaxNesting + 1, 1},
		{"if bodies", "const a = 1;\n" + strings.Repeat("if (a)\n", n) + "a;", MaxNesting + 2, 4},
		{"arrow bodies", "x = " + strings.Repeat("a => ", n) + "1", 1, 5 + 5*MaxNesting},
		{"functions", "x = " + strings.Repeat("function () { return ", n) + "1" + strings.Repeat("}", n), 1, 5 + 21*(MaxNesting-1) + 9},
		{"prefix operators", "x = " + strings.Repeat("!", n) + "1", 1, 4 + MaxNesting},
		{"arrows in conditionals over lines", "x = " + strings.Repeat("a => a ? a :\n", n) + "1", 0, 0},
		{"arrows on continued lines", "x = " + strings.Repeat("a => a\n in a ? a : ", n) + "1", 0, 0},
		{"brackets after a non-null assertion", "x = a! / " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n), 1, 9 + MaxNesting},
		{"assignments", "let a;\nx = " + strings.Repeat("a = ", n) + "1", 2, 3 + 4*MaxNesting},
		{"powers", "x = " + strings.Repeat("2 ** ", n) + "1", 1, 2 + 5*MaxNesting},
		{"conditionals", "x = " + strings.Repeat("a ? b : ", n) + "1", 1, 8*MaxNesting - 1},
		{"else while", strings.Repeat("if (a) x; else while (a) ", n) + "x;", 0, 0},
		{"template substitutions", "x = '😀' + `" + strings.Repeat("${`", n) + strings.Repeat("`}", n) + "`", 1, 10 + 3*MaxNesting},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Normalize(tc.code, ProgramFile)
			runtime.ReadMemStats(&m1)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "nests deeper than 32 levels") {
				t.Fatalf("Normalize: %v, want the nesting error", err)
			}
			if tc.line > 0 && (se.Line != tc.line || se.Column != tc.col) {
				t.Errorf("at %d:%d, want %d:%d", se.Line, se.Column, tc.line, tc.col)
			}
			// Refused on a scan of the code: a few times its size, where
			// esbuild allocated megabytes (64 MB for the blocks).
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 64*uint64(len(tc.code))+256<<10 {
				t.Errorf("allocated %d bytes for %d bytes of code", got, len(tc.code))
			}
		})
	}
}

// TestNestingAllowed: ordinary code, however long, and nesting hidden in
// strings, comments, templates and regular expressions is not counted.
func TestNestingAllowed(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := map[string]string{
		"at the bound":               "x = " + deep(MaxNesting-1),
		"else if chain":              "const a = 1;\nlet r;\n" + strings.Repeat("if (a === 2) { r = 1; } else ", 100) + "{ r = 0; }\nr",
		"braceless else if":          "const a = 1;\nlet r;\n" + strings.Repeat("if (a === 2) r = 1;\nelse ", 100) + "r = 0;\nr",
		"many statements":            strings.Repeat("if (input) x = !input;\nf = (a) => a + 1\n", 500) + "1",
		"comparisons":                "const a = 1, o = {b: {c: 1}};\n" + strings.Repeat("a <= 1 && a >= 1 && a !== 2 && a == 1 && o?.b?.c === 1 && (o.x ?? 1) && ", 50) + "a",
		"compound assignments":       "let a = 1;\n" + strings.Repeat("a += 1; a **= 1; a >>>= 0; a ??= 1;\n", 50) + "a",
		"optional parameters":        "function f(a?: number, b?: string): number { return a ?? 1 }\ninterface I {\n  a?: number\n  b?: string\n}\nf()",
		"returns without semicolons": "const a = 1;\n" + strings.Repeat("if (!a) return\n", 100) + "1",
		"no semicolons":              strings.Repeat("g = y => y * 2\n", 100) + "g(1)",
		"long boolean":               "const a = 1;\n" + strings.Repeat("!a && ", 100) + "!a",
		"strings":                    "x = '" + strings.Repeat("{", 100) + "' + \"" + strings.Repeat("(", 100) + "\"",
		"comments":                   "// " + strings.Repeat("{", 100) + "\n/* " + strings.Repeat("[", 100) + " */ 1",
		"template text":              "x = `" + strings.Repeat("{", 100) + "${1}" + strings.Repeat("(", 100) + "`",
		"regexp":                     "x = /" + strings.Repeat("\\(", 100) + "[(/]/.test('a')",
		"typical":                    "async () => {\n  for (const x of [1]) {\n    const r = await Promise.all([x].map(async (y) => {\n      if (y) { return await Promise.resolve({ q: { r: [typeof !y] } }); }\n    }));\n    return r;\n  }\n}",
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Normalize(code, ProgramFile); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
		})
	}
}

// TestChainBounded: an expression chaining more than MaxChain operators is
// refused before esbuild sees it, at the first link past the bound. Before,
// 32 Ki terms of `+` took seconds in goja's compiler (the square of the
// length) and a MiB of `.b` overflowed Go's stack in esbuild's visitor, a
// fatal error that ended the process.
func TestChainBounded(t *testing.T) {
	const n = 32 << 10
	tests := []struct {
		name      string
		code      string
		line, col int
	}{
		{"sum", "x = " + strings.Repeat("a + ", n) + "1", 1, 4*MaxChain + 7},
		{"member accesses", "x = a" + strings.Repeat(".b", n), 1, 2*MaxChain + 6},
		{"calls", "x = a" + strings.Repeat("()", n), 1, 2*MaxChain + 6},
		{"indexes", "x = a" + strings.Repeat("[0]", n), 1, 3*MaxChain + 6},
		{"method calls over lines", "a" + strings.Repeat("\n.b()", n), MaxChain/2 + 2, 1},
		{"conjunctions", "x = " + strings.Repeat("a && ", n) + "1", 1, 5*MaxChain + 7},
		{"comparisons", "x = " + strings.Repeat("a !== ", n) + "1", 1, 6*MaxChain + 8},
		{"in parentheses", "x = " + strings.Repeat("(a + a) + ", n) + "1", 0, 0},
		{"through a call", "x = f(" + strings.Repeat("a + ", n) + "1)", 0, 0},
		{"sequence", "x = (" + strings.Repeat("a, ", n) + "a)", 1, 3*MaxChain + 7},
		{"sequence statement", strings.Repeat("a, ", n) + "a", 1, 3*MaxChain + 2},
		{"sequence in a block", "{ " + strings.Repeat("a, ", n) + "a }", 1, 3*MaxChain + 4},
		{"sequence in a function", "() => { a.b; " + strings.Repeat("a, ", n) + "a }", 1, 3*MaxChain + 15},
		{"sequence after a return's line", "return\n{ " + strings.Repeat("a, ", n) + "a }", 2, 3*MaxChain + 4},
		{"sequence in a case", "switch (a) { case b ? 1 : 2: { " + strings.Repeat("a, ", n) + "a } }", 0, 0},
		{"sequence in a for", "for (let i = 0, j = 0; ; " + strings.Repeat("i++, ", n) + "j++) break", 1, 5*MaxChain + 29},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Normalize(tc.code, ProgramFile)
			runtime.ReadMemStats(&m1)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "chains more than 1000 operators") {
				t.Fatalf("Normalize: %v, want the chain error", err)
			}
			if tc.line > 0 && (se.Line != tc.line || se.Column != tc.col) {
				t.Errorf("at %d:%d, want %d:%d", se.Line, se.Column, tc.line, tc.col)
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 64*uint64(len(tc.code))+256<<10 {
				t.Errorf("allocated %d bytes for %d bytes of code", got, len(tc.code))
			}
		})
	}
}

// numbered repeats format n times, with 0 to n-1 in place of its %d.
func numbered(format string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// TestChainsAllowed: long code whose chains are broken by commas,
// statements or template substitutions, and chains at the bound.
func TestChainsAllowed(t *testing.T) {
	const n = 5000
	tests := map[string]string{
		"sum at the bound":        "const a = 1;\n" + strings.Repeat("a + ", MaxChain) + "a",
		"statements":              "const a = {b: {c: () => 1}};\n" + strings.Repeat("a.b.c() + a.b.c()\n", n) + "1",
		"array of expressions":    "const a = {b: 1};\n[" + strings.Repeat("a.b + 1, ", n) + "1]",
		"arguments":               "const a = {b: 1};\nMath.max(" + strings.Repeat("a.b * 2, ", n) + "1)",
		"template substitutions":  "const a = {b: 1};\n`" + strings.Repeat("${a.b + 1} ", n) + "`",
		"object":                  "({" + strings.Repeat("k: 1 + 2 * 3 - 4, ", n) + "})",
		"method chain":            "[1, 2, 3]" + strings.Repeat("\n  .map((x) => x + 1)", 200) + "\n  .length",
		"declarations":            "let " + numbered("a%d = 1 + 2, ", n) + "b = 1",
		"nested objects":          "({ k: {" + strings.Repeat("a: 1 + 2, ", n) + "} })",
		"objects in conditionals": "const c = 1;\nconst o = c ? {" + strings.Repeat("a: 1, ", n) + "} : {" + strings.Repeat("b: 2, ", n) + "}",
		"shorthand properties":    "const a = 1;\nconst o = {" + strings.Repeat("a, ", n) + "};\no",
		"returned object":         "return {" + strings.Repeat("a: 1, ", n) + "}",
		"destructured names":      "const {" + numbered("a%d, ", n) + "...r} = {};\nconst [" + numbered("b%d, ", n) + "] = [];\nr",
		"export default object":   "export default {" + numbered("a%d: 1, ", n) + "}",
		"destructured parameter":  "(({" + numbered("a%d, ", n) + "}) => 1)",
		"enum members":            "enum E {" + numbered("A%d = 1 << 3, ", n) + "}",
		"index signature types":   "const o: Record<string, number> = {" + strings.Repeat("a: 1, ", n) + "}",
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Normalize(code, ProgramFile); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
		})
	}
}

// TestJoinBounded: code whose binary + make esbuild copy more than
// MaxJoined bytes in all is refused before esbuild sees it. Before, esbuild
// copied the text joined so far at each +: a MiB literal then 999 `+ ""`
// allocated 2 GB, a thousand KB literals joined 1 GB, 40 KB of `${a}` then
// 999 `+ ""` 725 MB.
func TestJoinBounded(t *testing.T) {
	kb := "'" + strings.Repeat("a", 1022) + "'"
	tests := map[string]string{
		"a MiB then empty strings": "x = '" + strings.Repeat("a", 1<<20) + "'" + strings.Repeat(" + ''", 999),
		"KB literals":              "x = " + strings.Repeat(kb+" + ", 999) + kb,
		"substitutions then empty": "let a = 1;\nx = `" + strings.Repeat("${a}", 10000) + "`" + strings.Repeat(" + ''", 999),
		"templates":                "let a = 1;\nx = " + strings.Repeat("`"+strings.Repeat("${a}", 100)+"` + ", 999) + "``",
		"objects in expressions":   strings.Repeat("x = ''"+strings.Repeat(" + {}", 999)+";\n", 200),
		"in parentheses":           "x = ('" + strings.Repeat("a", 1<<20) + "'" + strings.Repeat(" + ''", 100) + ")",
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Normalize(code, ProgramFile)
			runtime.ReadMemStats(&m1)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "joins too much with +") {
				t.Errorf("Normalize: %v, want the join error", err)
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 64*uint64(len(code))+256<<10 {
				t.Errorf("allocated %d bytes for %d bytes of code", got, len(code))
			}
		})
	}
}

// TestJoinAllowed: text built with + as programs build it, and long text
// written otherwise.
func TestJoinAllowed(t *testing.T) {
	row := "'<tr><td class=\"name\">Row</td><td class=\"n\">42</td><td>open</td></tr>\\n' +\n"
	tests := map[string]string{
		"300 rows of HTML":      "const html = '<table>\\n' +\n" + strings.Repeat(row, 300) + "'</table>';\nhtml.length",
		"rows with values":      "const rows = [{ a: 1, b: 'x' }];\nlet html = '';\n" + strings.Repeat("for (const r of rows) html += '<tr><td>' + r.a + '</td><td>' + r.b + '</td></tr>';\n", 300) + "html",
		"100 KB template":       "const r = { a: 1, b: 'x' };\n`" + strings.Repeat("<tr><td>${r.a + 1}</td><td>${r.b + '!'}</td></tr>\n", 2000) + "`",
		"a big literal, parsed": "JSON.parse('[" + strings.Repeat("1, ", 250<<10) + "1]').map((x) => x + 1).filter((x) => x > 1).length + ' numbers'",
		"array join":            "[" + strings.Repeat("'"+strings.Repeat("a", 1000)+"', ", 1000) + "].join('')",
		"many short joins":      strings.Repeat("x = 'a' + 1 + 'b' + 2 + 'c' + 3 + 'd';\n", 20000) + "x",
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Normalize(code, ProgramFile); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
		})
	}
}

// TestEnumStrings: an enum that could join strings is refused, at what
// makes it so, before esbuild sees it: esbuild copies a member's value
// into every use and joins strings in members' values, so 300 bytes of
// members each doubling the last made 20 MB, each further member twice
// that. Numeric enums, string enums whose members are literals, and enum
// as a property name, are code as before.
func TestEnumStrings(t *testing.T) {
	double := func(first string) string {
		s := "enum E { A0 = " + first
		for i := 1; i < 64; i++ {
			s += fmt.Sprintf(", A%d = A%d + A%d", i, i-1, i-1)
		}
		return s + " }\nE.A63"
	}
	refused := []struct {
		name, code string
		col        int
	}{
		{"a string doubled", double("'ab'"), 26},
		{"typeof doubled", double("typeof 1"), 30},
		{"a number joined to a string", "enum E { A = 1 + 2, B = 'b' }", 25},
		{"a string copied", "enum E { A = 'a', B = A }", 23},
		{"a string copied by a quoted name", "enum E { 'x' = 'a', 'y' = x }", 27},
		{"a string copied in parentheses", "enum E { A = (0, 'a'), B = (A) }", 29},
		{"an array doubled", double("[] + 1"), 15},
		{"a template", "enum E { A = 1, B = `${A}${A}` }", 21},
		{"a regular expression", "const enum E { A = /a/.constructor }", 20},
		{"an object", "declare enum E { A = {} + 1 }", 22},
		{"in parentheses", "enum E { A = 1, B = (A + 'x') }", 26},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Normalize(tc.code, ProgramFile)
			runtime.ReadMemStats(&m1)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "an enum's strings may not be joined or copied") {
				t.Fatalf("Normalize: %v, want the enum error", err)
			}
			if se.Line != 1 || se.Column != tc.col {
				t.Errorf("at %d:%d, want 1:%d", se.Line, se.Column, tc.col)
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 256<<10 {
				t.Errorf("allocated %d bytes for %d bytes of code", got, len(tc.code))
			}
		})
	}
	allowed := map[string]string{
		"numbers":            "enum E { A, B, C = 10 }\nE.C + E.A",
		"flags":              "enum F { A = 1 << 0, B = 1 << 1, AB = A | B, C = A + B * 2 }\nF.AB",
		"const enum":         "const enum E { A = -1, B = A + 1 }\nE.B",
		"enum as a property": "const o = { enum: 'a', e: 'b' };\no.enum + `${o.e}` + ['c'][0]",
		"after an enum":      "enum E { A }\nconst s = 'x' + E.A;\ns",
		"strings":            "enum Color { Red = 'RED', Green = \"GREEN\", 'Blue-ish' = 'BLUE' }\nenum N { A = 1 + 1, B = A * 2, C = N.B | A }\nColor.Green + N.C",
	}
	for name, code := range allowed {
		t.Run(name, func(t *testing.T) {
			if _, err := Normalize(code, ProgramFile); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
		})
	}
}

// TestFunctionsBounded: code defining more than MaxFunctions functions is
// refused before esbuild sees it. Before, esbuild allocated 3 KB for each
// function and more when nested: a MiB of arrows 30 deep took 1.7 GB.
func TestFunctionsBounded(t *testing.T) {
	tests := map[string]string{
		"arrows 30 deep":  strings.Repeat("f = "+strings.Repeat("a => ", 30)+"1;\n", 6700),
		"arrows":          "x = [" + strings.Repeat("a => 1, ", 130000) + "]",
		"functions":       numbered("function f%d() {}\n", 50000),
		"methods":         "x = {" + numbered("m%d() {},\n", 50000) + "}",
		"class methods":   "class A {" + numbered("m%d() {}\n", 50000) + "}",
		"typed methods":   "class A {" + numbered("m%d(): { a: number } { return { a: 1 } }\n", 20000) + "}",
		"typed functions": numbered("function f%d(a: number): number {}\n", 25000),
		"async functions": numbered("const f%d = async function () { return 1 };\n", 20000),
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Normalize(code, ProgramFile)
			runtime.ReadMemStats(&m1)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "defines more than 10000 functions") {
				t.Errorf("Normalize: %v, want the functions error", err)
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 64*uint64(len(code))+256<<10 {
				t.Errorf("allocated %d bytes for %d bytes of code", got, len(code))
			}
		})
	}
	for name, code := range map[string]string{
		"at the bound": "x = [" + strings.Repeat("a => 1, ", MaxFunctions) + "]",
		"blocks":       "let a = 1;\n" + strings.Repeat("if (a) { a++ } else { a-- }\nfor (;;) { break }\nwhile (a) { a = 0 }\nswitch (a) { case 1: { a++ } }\n", 5000),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Normalize(code, ProgramFile); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
		})
	}
}
