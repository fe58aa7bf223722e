package source

import (
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// recoverLastExpression handles expression statements that esbuild
// dropped at the end of the code. Even without minification esbuild removes
// an expression statement it folded into a primitive (`-1`, `!0`, `'a' + 1`,
// an enum member), so a program ending in one would lose its value or, worse,
// return the value of the statement before.
//
// The original text after the start of the last statement that survived is
// parsed with goja (when it is plain JavaScript) to find the statement that
// really comes last; for TypeScript the last non-blank line is taken as that
// statement when the surviving one starts on an earlier line. The transform
// is then retried with "return " inserted there, and the retry is used only
// if it merely appends a top-level return statement to the same statements.
func recoverLastExpression(src string, t *transformed, file string, codeLines int) (*transformed, bool) {
	at, ok := droppedTail(src, t)
	if !ok {
		return nil, false
	}
	const ret = "return "
	res := api.Transform(wrapPrefix+"\n"+src[:at]+ret+src[at:]+"\n"+wrapSuffix, transformOptions)
	if len(res.Errors) > 0 {
		return nil, false
	}
	t2, err := parseTransform(res, file, codeLines)
	if err != nil {
		return nil, false
	}
	list := t2.block.List
	if len(list) == 0 {
		return nil, false
	}
	last, ok := list[len(list)-1].(*ast.ReturnStatement)
	if !ok || last.Argument == nil {
		return nil, false
	}
	before := strings.TrimSpace(t.src[int(t.block.LeftBrace) : int(t.block.RightBrace)-1])
	before2 := strings.TrimSpace(t2.src[int(t2.block.LeftBrace) : int(last.Idx0())-1])
	if before != before2 {
		return nil, false
	}
	starts := lineStarts(src)
	li := sort.Search(len(starts), func(i int) bool { return starts[i] > at }) - 1
	t2.pm.shift = srcShift{line: li + 1, col: utf16Len(src[starts[li]:at]), n: len(ret)}
	return t2, true
}

// droppedTail returns the byte offset in src of a last statement that may
// have been dropped by esbuild, if there is a sign of one.
func droppedTail(src string, t *transformed) (int, bool) {
	// The model's statements follow the wrapper's `let $cm$d;`.
	stmts := nonEmpty(t.block.List[min(1, len(t.block.List)):])
	from, survivors := 0, 0
	starts := lineStarts(src)
	lastLine, line := lastNonBlank(src, starts)
	if lastLine < 0 {
		return 0, false
	}
	startLine := 0
	if len(stmts) > 0 {
		l, c, ok := t.pm.at(int(stmts[len(stmts)-1].Idx0()) - 1)
		if !ok || l > len(starts) {
			return 0, false
		}
		from, survivors, startLine = starts[l-1]+utf16ToBytes(src[starts[l-1]:], c-1), 1, l-1
	}

	// Plain JavaScript: parse what follows the last survivor.
	const pre = "(async () => {\n"
	tail := src[from:]
	if prg, err := parser.ParseFile(nil, "", pre+tail+"\n})", 0, parser.WithDisableSourceMaps); err == nil {
		var body *ast.BlockStatement
		if len(prg.Body) == 1 {
			if es, ok := prg.Body[0].(*ast.ExpressionStatement); ok {
				body = arrowBlock(es.Expression)
			}
		}
		if body == nil {
			return 0, false
		}
		list := nonEmpty(body.List)
		if len(list) <= survivors {
			return 0, false
		}
		es, ok := list[len(list)-1].(*ast.ExpressionStatement)
		if !ok {
			return 0, false
		}
		off := statementStart(pre+tail, int(es.Expression.Idx0())-1) - len(pre)
		if off < 0 {
			return 0, false
		}
		return from + off, true
	}

	// TypeScript: the last non-blank line, if the survivor starts before it.
	if survivors > 0 && startLine >= lastLine {
		return 0, false
	}
	trimmed := strings.TrimLeft(line, " \t")
	for _, p := range []string{"//", "/*", "*", "}", ")", "]"} {
		if strings.HasPrefix(trimmed, p) {
			return 0, false
		}
	}
	return starts[lastLine] + len(line) - len(trimmed), true
}

// lastNonBlank returns the index (0-based) of the last line of src that
// is not blank, and that line; -1 when there is none. starts are src's
// lineStarts.
func lastNonBlank(src string, starts []int) (int, string) {
	for i := len(starts) - 1; i >= 0; i-- {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if line := src[starts[i]:end]; strings.TrimSpace(line) != "" {
			return i, line
		}
	}
	return -1, ""
}

// utf16ToBytes returns the byte length of the first n UTF-16 units of s.
func utf16ToBytes(s string, n int) int {
	units := 0
	for i, r := range s {
		if units >= n {
			return i
		}
		units += utf16.RuneLen(r)
	}
	return len(s)
}
