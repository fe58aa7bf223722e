// Package source turns the model's code into a program goja can run
// (Normalize): it strips Markdown fences, compiles TypeScript with esbuild,
// reads the shape the code has (statements, an expression, a function, an
// export), maps positions back to the model's own source, and finds the
// static calls the check before running looks at (StaticCalls).
package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/unistring"
)

// Names the normalised source uses. They start with "$cm$" so that they do
// not clash with the model's identifiers (esbuild renames the model's own
// bindings where they would shadow these).
const (
	mainName    = "$cm$main" // the async function wrapping the program
	inputName   = "$cm$in"   // its argument (codemode.run input), kept out of reach of a user `input` binding
	defaultName = "$cm$d"    // the value of `export default`
	// defaultSlot replaces the 7 bytes of the keyword `default` so that no
	// column moves.
	defaultSlot = defaultName + " ="

	// wrapPrefix and wrapSuffix surround the model's code (on lines of their
	// own) before esbuild sees it: the code is the body of an async arrow
	// function, so top-level await and return are legal and its function
	// declarations stay declarations; the arrow sits inside a function whose
	// parameter is input, so the code sees input and may declare its own.
	wrapPrefix = "async function " + mainName + "(input) { const " + inputName + " = input; return (async () => { let " + defaultName + ";"
	wrapSuffix = "})(); }"

	// finalPrefix and finalSuffix turn esbuild's output (the function plus
	// any helpers esbuild adds) into one expression whose value is the
	// function.
	finalPrefix = "(function () {\n"
	finalSuffix = "\nreturn " + mainName + ";\n})()"

	// ProgramFile is the file name of the model's program in stack traces.
	ProgramFile = "program.js"

	maxExportRewrites = 32
)

// Shape is the shape Normalize recognised in the model's code: it decides
// what the program's value is.
type Shape int

const (
	// ShapeStatements: a statement list without a final expression; the
	// value is undefined unless the code returns one with a top-level return.
	ShapeStatements Shape = iota + 1
	// ShapeExpression: the last statement is an expression; its (awaited)
	// value is the program's value.
	ShapeExpression
	// ShapeFunction: the last statement is a function or arrow function
	// expression (`async () => {…}`); it is called with the input and its
	// (awaited) return value is the program's value.
	ShapeFunction
	// ShapeNamedFunction: the code ends with a function declaration; the
	// function named main, else that last one, is called with the input.
	ShapeNamedFunction
	// ShapeExportDefault: `export default X`; X is the value, called with
	// the input when it is a function.
	ShapeExportDefault
)

func (s Shape) String() string {
	if s < ShapeStatements || s > ShapeExportDefault {
		return "unknown"
	}
	return [...]string{"statements", "expression", "function", "named function", "export default"}[s-ShapeStatements]
}

// Normalized is a program ready to run in goja.
type Normalized struct {
	// Shape is how the model's code was read.
	Shape Shape
	// File is the file name the program has in stack traces.
	File string

	// program evaluates to an async function of one argument, the input:
	// calling it runs the model's code and its Promise settles with the
	// program's value.
	program *goja.Program
	pos     *positionMap
	static  staticInfo // the static calls, for the check before running
}

// Compiled is the program compiled for goja; one compiled program is safe
// to run in several runtimes.
func (n *Normalized) Compiled() *goja.Program { return n.program }

// StaticCalls are the program's static calls (see StaticCall), for the
// check before running.
func (n *Normalized) StaticCalls() []sandbox.StaticCall { return n.static.calls }

// Roots maps each global name the program uses as X.y(…) or X["y"](…)
// without declaring it to the first place it is so used.
func (n *Normalized) Roots() map[string]Place { return n.static.roots }

// DashedCalls are the program's method names written with '-' on a
// global's chain of names (everything.get-sum(…), which JavaScript reads as
// everything.get - sum(…)), the Method holding the dashed name.
func (n *Normalized) DashedCalls() []sandbox.StaticCall { return n.static.dashed }

// Position maps a line and column of Source (1-based; the column in bytes,
// as goja reports them) to the model's original code (1-based; the column in
// UTF-16 units, as JavaScript counts). ok is false for positions that are not
// in the model's code (the wrapper around it).
func (n *Normalized) Position(line, col int) (origLine, origCol int, ok bool) {
	return n.pos.original(line, col)
}

// NameAt returns the identifier that starts at a line and column of Source
// (as Position takes them), or "": what an error goja reports there is
// about, when its message does not say.
func (n *Normalized) NameAt(line, col int) string { return n.pos.nameAt(line, col) }

// SyntaxError reports code that cannot be compiled. Line and Column are
// 1-based in the model's original code (Column in UTF-16 units); they are 0
// when the position is unknown.
type SyntaxError struct {
	Message string
	Line    int
	Column  int
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("SyntaxError: %s (line %d:%d)", e.Message, e.Line, e.Column)
	}
	return "SyntaxError: " + e.Message
}

// Normalize turns the model's code into a program goja can run, with the
// file name it has in stack traces (ProgramFile for the model's program,
// its own for a snippet). It accepts
// every program shape the README's "Writing programs" lists (the rules
// below), optionally inside a Markdown fence (```,
// ```js, ```ts, ```typescript, ```javascript):
//
//   - TypeScript syntax (annotations, interfaces, `as`, generics, enums) is
//     stripped by esbuild, never type-checked; async generators and
//     `for await` are lowered because goja lacks them.
//   - The code becomes the body of an async function, so top-level await
//     and a top-level return work. The shape is read from the syntax tree
//     (goja's parser over esbuild's output), not guessed from text:
//     1. `export default X` makes X the value (called with the input when
//     it is a function or arrow literal); other `export` keywords are
//     ignored.
//     2. Otherwise, when the last statement is an expression statement: a
//     function or arrow function literal (`async () => {…}`, `() => …`,
//     `(async function () {…})`) is called with the input and its result
//     is the value; any other expression is the value (`const x = await
//     a.b({}); x.y`).
//     3. Otherwise, when the last statement is a function declaration
//     (`async function main() {…}`), the function named main, if there is
//     one, else that last function, is called with the input.
//     4. Otherwise the value is undefined, or what a top-level return gives.
//     Only an expression statement gives a value: a program ending in
//     `if`, `try` or a loop has none (no eval-style completion values).
//   - The value is awaited, so a Promise settles first.
//   - The code is read in sloppy mode; input is in scope (undefined for a
//     program, codemode.run's argument for a snippet) and may be redeclared.
//   - Markdown fences: see stripFence. `import` is a syntax error that says
//     connectors are globals.
//   - Code nesting deeper than MaxNesting levels, or chaining more than
//     MaxChain operators in one expression, is a syntax error at the first
//     place past it (see checkNesting).
//
// Known limit: esbuild drops expression statements it folds into a
// primitive; a dropped last statement is recovered (see
// recoverLastExpression), except in TypeScript code when it shares its line
// with the statement before it.
//
// Errors are *SyntaxError values with the line and column in code as the
// model wrote it (before fence removal, wrapping or TypeScript stripping).
// Normalize is pure and safe for concurrent use.
func Normalize(code, file string) (*Normalized, error) {
	src := stripFence(code)
	if err := checkNesting(src); err != nil {
		return nil, err
	}
	codeLines := strings.Count(src, "\n") + 1

	res, src, err := transform(src)
	if err != nil {
		return nil, err
	}
	t, err := parseTransform(res, file, codeLines)
	if err != nil {
		return nil, err
	}
	shape, list := readShape(t.block)
	if shape == ShapeStatements || shape == ShapeExpression {
		if t2, ok := recoverLastExpression(src, t, file, codeLines); ok {
			t, shape, list = t2, ShapeExpression, t2.block.List
		}
	}
	t.block.List = list
	program, err := goja.CompileAST(t.prg, false)
	if err != nil {
		return nil, t.pm.syntaxError(err)
	}
	return &Normalized{Shape: shape, File: file, program: program, pos: t.pm, static: collectStatic(t.prg, t.pm)}, nil
}

// userBlock finds the body of the arrow function holding the model's
// statements in the final program: (function () { function mainName(input)
// { const …; return (async () => { … })(); } … return mainName; })().
func userBlock(prg *ast.Program) *ast.BlockStatement {
	if len(prg.Body) != 1 {
		return nil
	}
	es, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	iife, ok := es.Expression.(*ast.CallExpression)
	if !ok {
		return nil
	}
	outer, ok := iife.Callee.(*ast.FunctionLiteral)
	if !ok || outer.Body == nil {
		return nil
	}
	for _, s := range outer.Body.List {
		fd, ok := s.(*ast.FunctionDeclaration)
		if !ok || fd.Function == nil || fd.Function.Name == nil || fd.Function.Name.Name.String() != mainName || fd.Function.Body == nil {
			continue
		}
		for _, st := range fd.Function.Body.List {
			if ret, ok := st.(*ast.ReturnStatement); ok {
				if call, ok := ret.Argument.(*ast.CallExpression); ok && arrowBlock(call.Callee) != nil {
					return arrowBlock(call.Callee)
				}
			}
		}
	}
	return nil
}

// arrowBlock is the body of an arrow function with a block, or nil.
func arrowBlock(e ast.Expression) *ast.BlockStatement {
	if arrow, ok := e.(*ast.ArrowFunctionLiteral); ok {
		b, _ := arrow.Body.(*ast.BlockStatement)
		return b
	}
	return nil
}

// readShape decides the shape of the model's statements (block) and
// returns the statements that make the wrapper return the program's value:
// the last expression statement becomes a return statement, or a return
// statement is appended. The syntax tree is edited rather than the text, so
// that the program is parsed once and keeps esbuild's positions; what is
// added sits at the expression it returns, or at the block's end.
func readShape(block *ast.BlockStatement) (Shape, []ast.Statement) {
	list := block.List
	end := block.RightBrace
	ident := func(name string) *ast.Identifier {
		return &ast.Identifier{Name: unistring.NewFromString(name), Idx: end}
	}
	callInput := func(callee ast.Expression) ast.Expression {
		return &ast.CallExpression{Callee: callee, LeftParenthesis: end, ArgumentList: []ast.Expression{ident(inputName)}, RightParenthesis: end}
	}
	returning := func(e ast.Expression) []ast.Statement {
		return append(slices.Clip(list), &ast.ReturnStatement{Return: end, Argument: e})
	}
	var def ast.Expression
	for _, s := range list {
		if es, ok := s.(*ast.ExpressionStatement); ok {
			if as, ok := es.Expression.(*ast.AssignExpression); ok {
				if id, ok := as.Left.(*ast.Identifier); ok && id.Name.String() == defaultName {
					def = as.Right
				}
			}
		}
	}
	if def != nil {
		if isFunctionLiteral(def) {
			return ShapeExportDefault, returning(callInput(ident(defaultName)))
		}
		return ShapeExportDefault, returning(ident(defaultName))
	}
	stmts := nonEmpty(list)
	if len(stmts) == 0 {
		return ShapeStatements, list
	}
	switch last := stmts[len(stmts)-1].(type) {
	case *ast.ExpressionStatement:
		shape, value := ShapeExpression, last.Expression
		if isFunctionLiteral(value) {
			shape, value = ShapeFunction, callInput(value)
		}
		out := slices.Clone(list)
		out[slices.Index(out, ast.Statement(last))] = &ast.ReturnStatement{Return: last.Expression.Idx0(), Argument: value}
		return shape, out
	case *ast.FunctionDeclaration:
		name := ""
		for _, s := range stmts {
			if fd, ok := s.(*ast.FunctionDeclaration); ok && fd.Function.Name != nil && fd.Function.Name.Name.String() == "main" {
				name = "main"
			}
		}
		if name == "" && last.Function.Name != nil {
			name = last.Function.Name.Name.String()
		}
		if name == "" {
			return ShapeStatements, list
		}
		return ShapeNamedFunction, returning(callInput(ident(name)))
	}
	return ShapeStatements, list
}

// nonEmpty is list without its empty statements.
func nonEmpty(list []ast.Statement) []ast.Statement {
	var stmts []ast.Statement
	for _, s := range list {
		if _, ok := s.(*ast.EmptyStatement); !ok {
			stmts = append(stmts, s)
		}
	}
	return stmts
}

func isFunctionLiteral(e ast.Expression) bool {
	switch e.(type) {
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return true
	}
	return false
}

// statementStart moves back from an expression's first byte in code over
// the parentheses that open it, and the block comments between them
// (`(/* note */ -1)`), since goja's tree does not keep parentheses: the
// "return " recoverLastExpression inserts there precedes the whole
// statement.
func statementStart(out string, off int) int {
	off = clamp(off, 0, len(out))
	j := off - 1
	for {
		for j >= 0 && isSpace(out[j]) {
			j--
		}
		switch {
		case j >= 1 && out[j] == '/' && out[j-1] == '*':
			open := strings.LastIndex(out[:j-1], "/*")
			if open < 0 {
				return off
			}
			j = open - 1
		case j >= 0 && out[j] == '(':
			off = j
			j--
		default:
			return off
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}
