package source

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
)

// transformed is esbuild's output for the wrapped code, made one
// expression whose value is the wrapper function (finalPrefix, finalSuffix)
// and parsed.
type transformed struct {
	src   string // the final source
	prg   *ast.Program
	block *ast.BlockStatement // the model's statements
	pm    *positionMap
}

func parseTransform(res api.TransformResult, file string, codeLines int) (*transformed, error) {
	out := string(res.Code)
	sm, err := sourcemap.Parse("", res.Map)
	if err != nil {
		return nil, fmt.Errorf("sandbox: esbuild source map: %w", err)
	}
	src := finalPrefix + out + finalSuffix
	pm := &positionMap{src: src, lineStarts: lineStarts(src), outEnd: len(finalPrefix) + len(out), sm: sm, codeLines: codeLines, marks: utf16Marks(src)}
	prg, perr := parser.ParseFile(nil, file, src, 0, parser.WithDisableSourceMaps)
	if perr != nil {
		return nil, pm.syntaxError(perr)
	}
	block := userBlock(prg)
	if block == nil {
		return nil, fmt.Errorf("sandbox: normalize: wrapper function not found in esbuild output")
	}
	return &transformed{src: src, prg: prg, block: block, pm: pm}, nil
}

var transformOptions = api.TransformOptions{
	Loader:         api.LoaderTS,
	Target:         api.ES2022,
	Supported:      map[string]bool{"async-generator": false, "for-await": false},
	Sourcemap:      api.SourceMapExternal,
	Sourcefile:     "program.ts",
	SourcesContent: api.SourcesContentExclude,
	Charset:        api.CharsetUTF8,
	LegalComments:  api.LegalCommentsNone,
	LogLevel:       api.LogLevelSilent,
}

// transform runs esbuild over the wrapped code. `export` keywords, which
// esbuild rejects inside the wrapper function, are rewritten in place
// (same length, so no position moves) and the transform is retried. It
// returns the result and the code as finally transformed.
func transform(src string) (api.TransformResult, string, error) {
	for attempt := 0; ; attempt++ {
		res := api.Transform(wrapPrefix+"\n"+src+"\n"+wrapSuffix, transformOptions)
		if len(res.Errors) == 0 {
			return res, src, nil
		}
		e := res.Errors[0]
		if attempt < maxExportRewrites && e.Text == `Unexpected "export"` && e.Location != nil {
			if next, ok := rewriteExport(src, e.Location.Line-1, e.Location.Column); ok {
				src = next
				continue
			}
		}
		return res, src, esbuildError(src, e)
	}
}

// rewriteExport blanks the `export` keyword at (line, col) of src (line
// 1-based, col in bytes) and, when `default` follows, turns that into an
// assignment to defaultName.
func rewriteExport(src string, line, col int) (string, bool) {
	starts := lineStarts(src)
	if line < 1 || line > len(starts) {
		return "", false
	}
	off := starts[line-1] + col
	if off < 0 || off+len("export") > len(src) || src[off:off+len("export")] != "export" {
		return "", false
	}
	b := []byte(src)
	copy(b[off:], "      ")
	i := off + len("export")
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if end := i + len("default"); strings.HasPrefix(string(b[i:]), "default") && (end == len(b) || !isIdentByte(b[end])) {
		copy(b[i:], defaultSlot)
	}
	return string(b), true
}

// isIdentByte reports whether c can be part of an identifier (any byte of
// a multi-byte character can).
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// esbuildError converts esbuild's first error into a *SyntaxError located
// in the model's code. The wrapper can move an error away from its cause (a
// stray closing brace ends the wrapper early; an unclosed one is found at
// the wrapper's end), so the unwrapped code is transformed too and its first
// error, when it comes no later, is preferred; errors that only exist
// because the code is not wrapped (top-level return, module strictness) are
// ignored. An error at the end of the input is put just after the last
// non-blank line.
func esbuildError(src string, e api.Message) error {
	codeLines := strings.Count(src, "\n") + 1
	if loc := e.Location; loc != nil && isImportLine(loc.LineText) {
		return &SyntaxError{
			Message: "import declarations are not supported: connectors are globals and nothing else can be imported",
			Line:    loc.Line - 1,
			Column:  1 + utf16Len(loc.LineText[:len(loc.LineText)-len(strings.TrimLeft(loc.LineText, " \t"))]),
		}
	}
	best := &SyntaxError{Message: e.Text}
	if loc := e.Location; loc != nil && loc.Line-1 >= 1 && loc.Line-1 <= codeLines {
		best.Line, best.Column = loc.Line-1, 1+utf16Len(prefixBytes(loc.LineText, loc.Column))
	}
	for _, e2 := range api.Transform(src, transformOptions).Errors {
		if e2.Location == nil || strings.Contains(e2.Text, "Top-level return") || strings.Contains(e2.Text, "Top-level await") || strings.Contains(e2.Text, "strict mode") {
			continue
		}
		line, col := e2.Location.Line, 1+utf16Len(prefixBytes(e2.Location.LineText, e2.Location.Column))
		if best.Line == 0 || line < best.Line || (line == best.Line && col <= best.Column) {
			best = &SyntaxError{Message: e2.Text, Line: line, Column: col}
		}
		break
	}
	if best.Line == 0 || strings.Contains(best.Message, "end of file") {
		best.Line, best.Column = endOfCode(src)
	}
	return best
}

func isImportLine(text string) bool {
	t := strings.TrimLeft(text, " \t")
	if !strings.HasPrefix(t, "import") {
		return false
	}
	rest := t[len("import"):]
	return rest != "" && strings.ContainsRune(" \t{*\"'", rune(rest[0]))
}

// prefixBytes is the first n bytes of s, or all of it.
func prefixBytes(s string, n int) string { return s[:clamp(n, 0, len(s))] }

// endOfCode returns the position just after the last non-blank line of src.
func endOfCode(src string) (line, col int) {
	i, text := lastNonBlank(src, lineStarts(src))
	if i < 0 {
		return 1, 1
	}
	return i + 1, utf16Len(strings.TrimRightFunc(text, unicode.IsSpace)) + 1
}
