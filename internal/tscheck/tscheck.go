// Package tscheck type-checks a program with a real TypeScript checker
// (tsgo or tsc, found on PATH) against the connectors' declarations
// before it runs (sandbox.typecheck: tsc).
package tscheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// Checker runs one TypeScript checker binary.
type Checker struct {
	bin     string // absolute path of tsgo or tsc
	timeout time.Duration
}

// DefaultTimeout bounds one check.
const DefaultTimeout = 60 * time.Second

// Find returns a Checker for tsgo when it is on PATH, else tsc; an error
// when neither is.
func Find() (*Checker, error) {
	for _, name := range []string{"tsgo", "tsc"} {
		if p, err := exec.LookPath(name); err == nil {
			return &Checker{bin: p, timeout: DefaultTimeout}, nil
		}
	}
	return nil, errors.New("neither tsgo nor tsc is on PATH (install TypeScript: npm install -g typescript)")
}

// Bin is the checker's path.
func (c *Checker) Bin() string { return c.bin }

// ambient declares what the sandbox gives a program besides the
// connectors and codemode (see package sandbox).
const ambient = `declare const console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};
declare function setTimeout(handler: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]): number;
declare function clearTimeout(id?: number): void;
declare function setInterval(handler: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]): number;
declare function clearInterval(id?: number): void;
`

// wrapLines is how many lines the program's file has before the model's
// code.
const wrapLines = 2

// Check type-checks code (a program in any shape the sandbox accepts)
// against declarations (every connector and the codemode global, as
// runtime.Declarations gives them) under --strict, and returns one line
// per type error in the program, "line L:C: message (TSnnnn)" with L:C in
// the model's own code. Errors the checker reports elsewhere (in the
// declarations) are not the program's and are left out. err is a failure
// of the checker itself.
func (c *Checker) Check(ctx context.Context, code, declarations string) ([]string, error) {
	dir, err := os.MkdirTemp("", "codemode-typecheck-")
	if err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	defer os.RemoveAll(dir)
	decls := filepath.Join(dir, "connectors.d.ts")
	prog := filepath.Join(dir, "program.ts")
	if err := os.WriteFile(decls, []byte(ambient+declarations), 0o600); err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	if err := os.WriteFile(prog, []byte(Wrap(code)), 0o600); err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "--strict", "--noEmit", "--pretty", "false",
		"--target", "es2022", "--lib", "es2022", "--module", "esnext", "--skipLibCheck",
		"connectors.d.ts", "program.ts")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("typecheck: %s did not finish within %s", filepath.Base(c.bin), c.timeout)
	}
	diags := Parse(out.String(), "program.ts")
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		return nil, nil
	case errors.As(runErr, &exit) && len(diags) > 0:
		return diags, nil
	case errors.As(runErr, &exit) && onlyIn(out.String(), "connectors.d.ts"):
		return nil, nil // errors in the declarations only: not the program's
	}
	return nil, fmt.Errorf("typecheck: %s: %v: %s", filepath.Base(c.bin), runErr, short.Clip(out.String(), 2000))
}

// Wrap makes the model's code the body of an async function (so top-level
// await and return type-check), line for line: a Markdown fence's lines
// become blank, `export default X` becomes `return X`, another `export`
// is dropped.
func Wrap(code string) string {
	lines := strings.Split(code, "\n")
	first := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = i
			break
		}
	}
	if first >= 0 && strings.HasPrefix(strings.TrimSpace(lines[first]), "```") {
		lines[first] = ""
		for i := len(lines) - 1; i > first; i-- {
			t := strings.TrimSpace(lines[i])
			if t == "" {
				continue
			}
			if t == "```" {
				lines[i] = ""
			}
			break
		}
	}
	for i, l := range lines {
		lines[i] = exportRE.ReplaceAllStringFunc(l, func(m string) string {
			indent := m[:len(m)-len(strings.TrimLeft(m, " \t"))]
			if strings.Contains(m, "default") {
				return indent + "return "
			}
			return indent
		})
	}
	return "export {};\nasync function $codemodeProgram(input: any) {\n" + strings.Join(lines, "\n") + "\n}\n"
}

var exportRE = regexp.MustCompile(`^[ \t]*export\s+(default\s+)?`)

// diagRE matches one diagnostic of `tsc --pretty false`:
// file(line,col): error TSnnnn: message.
var diagRE = regexp.MustCompile(`^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$`)

// Parse returns the diagnostics of file in a checker's output as "line
// L:C: message (TSnnnn)", with the lines of the program's wrapper taken
// off; a message's continuation lines are joined to it.
func Parse(output, file string) []string {
	var out []string
	last := -1
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := diagRE.FindStringSubmatch(line)
		if m == nil {
			if last >= 0 && strings.HasPrefix(line, " ") {
				out[last] += " " + strings.TrimSpace(line)
			}
			continue
		}
		last = -1
		if filepath.Base(m[1]) != file {
			continue
		}
		l, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		l -= wrapLines
		if l < 1 {
			l = 1
		}
		out = append(out, fmt.Sprintf("line %d:%d: %s (%s)", l, col, m[5], m[4]))
		last = len(out) - 1
	}
	return out
}

// onlyIn reports whether every error of a checker's output is located in
// file (and there is one): an error without a location (a bad option) is
// the checker's failure.
func onlyIn(output, file string) bool {
	n := 0
	for _, line := range strings.Split(output, "\n") {
		if !strings.Contains(line, "error TS") {
			continue
		}
		m := diagRE.FindStringSubmatch(line)
		if m == nil || filepath.Base(m[1]) != file {
			return false
		}
		n++
	}
	return n > 0
}
