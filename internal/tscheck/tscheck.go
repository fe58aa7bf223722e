// Package tscheck type-checks a program with a real TypeScript checker
// (tsgo or tsc, found on PATH) against the connectors' declarations
// before it runs (sandbox.typecheck: tsc).
//
// The program is hostile, and a checker is a program that reads files: a
// type such as typeof import("/abs/path"), an import or a reference
// directive would make it read any TypeScript file the server can, and
// print what it finds in a type error. So a check is confined:
//
//   - it resolves nothing: the program and the generated declarations
//     are its only files (noResolve, no automatic types), besides the
//     checker's own standard library; a checker that read any other file
//     anyway is refused, and nothing of its output is shown;
//   - what is shown of its output is the program's diagnostics, and
//     errors that name no file (a bad option), never a line about another
//     file;
//   - it runs as a worker does (confine): with only PATH in its
//     environment, in a temporary directory of its own, in a process
//     group of its own that is killed with the server, and, when the
//     server runs as root on Linux, as nobody;
//   - at most maxRunning checks run at once; more wait their turn.
package tscheck

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// Checker runs one TypeScript checker binary. It is safe for concurrent
// use.
type Checker struct {
	// fixed at creation
	bin   string // absolute path of tsgo or tsc
	log   *slog.Logger
	slots chan struct{} // one per check running
}

// timeout bounds one check.
const timeout = 60 * time.Second

// waitDelay bounds how long a check waits, once its checker is killed
// (cancelled, timed out) or has exited, for the checker's output to
// close: a process the checker started in a session of its own escapes
// the kill and could hold it, and the check's slot, for ever.
const waitDelay = 2 * time.Second

// maxRunning is how many checks run at once: a checker is a Node or Go
// process that takes a CPU and a few hundred MB while it runs. A check
// waits for its turn as long as its context allows.
const maxRunning = 2

// heapMB caps the JavaScript heap of tsc (Node's --max-old-space-size):
// a program and its declarations need far less.
const heapMB = 1024

// Find returns a Checker for tsgo when it is on PATH, else tsc; an error
// when neither is. log receives what the checker does (nil: discarded).
func Find(log *slog.Logger) (*Checker, error) {
	for _, name := range []string{"tsgo", "tsc"} {
		if p, err := exec.LookPath(name); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return newChecker(p, log), nil
		}
	}
	return nil, errors.New("neither tsgo nor tsc is on PATH (install TypeScript: npm install -g typescript)")
}

func newChecker(bin string, log *slog.Logger) *Checker {
	return &Checker{bin: bin, log: cmp.Or(log, slog.New(slog.DiscardHandler)), slots: make(chan struct{}, maxRunning)}
}

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

// The files of a check, in its directory.
const (
	declsFile   = "connectors.d.ts"
	programFile = "program.ts"
	configFile  = "tsconfig.json"
)

// tsconfig is the configuration of every check: strict, no output, and no
// file but the two given (noResolve: imports, import types and reference
// directives add nothing; types: no automatic @types); listFiles makes
// the checker say what it read. (Maps of strings, booleans and lists of
// strings always encode: no error to check.)
var tsconfig, _ = json.Marshal(map[string]any{
	"compilerOptions": map[string]any{
		"strict": true, "noEmit": true, "pretty": false,
		"target": "es2022", "lib": []string{"es2022"}, "module": "esnext",
		"skipLibCheck": true, "noResolve": true, "types": []string{},
		"listFiles": true,
	},
	"files": []string{declsFile, programFile},
})

// Check type-checks code (a program in any shape the sandbox accepts)
// against declarations (every connector and the codemode global, as
// runtime.Declarations gives them) under --strict, and returns one line
// per type error in the program, "line L:C: message (TSnnnn)" with L:C in
// the model's own code. Errors the checker reports elsewhere (in the
// declarations) are not the program's and are left out. err is a failure
// of the checker itself.
func (c *Checker) Check(ctx context.Context, code, declarations string) ([]string, error) {
	select {
	case c.slots <- struct{}{}:
	default:
		c.log.Info("a type check waits for a free checker", "running", cap(c.slots))
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("typecheck: waiting for a free checker (%d run at once): %w", cap(c.slots), ctx.Err())
		}
	}
	defer func() { <-c.slots }()

	dir, err := os.MkdirTemp("", "codemode-typecheck-")
	if err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string][]byte{
		declsFile:   []byte(ambient + declarations),
		programFile: []byte(wrap(code)),
		configFile:  tsconfig,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o600); err != nil {
			return nil, fmt.Errorf("typecheck: %w", err)
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "--project", configFile)
	cmd.WaitDelay = waitDelay
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NODE_OPTIONS=--max-old-space-size=" + strconv.Itoa(heapMB)}
	if err := confine(cmd, dir, c.log.Warn); err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	out := cappedBuffer{full: cancel}
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if out.over {
		return nil, fmt.Errorf("typecheck: %s wrote more than %d MiB (the program has too many type errors to show); it was stopped and the program is refused", filepath.Base(c.bin), maxOutput>>20)
	}
	if err := parent.Err(); err != nil {
		return nil, fmt.Errorf("typecheck: %w", err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("typecheck: %s did not finish within %s", filepath.Base(c.bin), timeout)
	}
	output := out.buf.String()
	if outside := outsideFiles(output, dir); len(outside) > 0 {
		c.log.Warn("a type check read files besides the program, its declarations and the checker's library; refused", "files", outside)
		return nil, fmt.Errorf("typecheck: %s read %d file(s) besides the program and its declarations; the program is refused and nothing of the check is shown", filepath.Base(c.bin), len(outside))
	}
	diags := parseDiagnostics(output, programFile)
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		return nil, nil
	case errors.As(runErr, &exit) && len(diags) > 0:
		return diags, nil
	case errors.As(runErr, &exit) && onlyIn(output, declsFile):
		return nil, nil // errors in the declarations only: not the program's
	}
	return nil, fmt.Errorf("typecheck: %s: %v%s", filepath.Base(c.bin), runErr, checkerErrors(output))
}

// maxOutput bounds what is read of a checker's output: a program's type
// errors and the files it read (--listFiles) take far less, and a hostile
// program can make a checker write a line of errors for every few bytes.
const maxOutput = 4 << 20

// cappedBuffer keeps a checker's output up to maxOutput; past that it is
// over and calls full (which stops the checker) once, and keeps nothing
// more. A check never uses a cut output: the files read are listed at its
// end. (The buffer is a field, not embedded: its ReadFrom would let
// io.Copy pass Write by.)
type cappedBuffer struct {
	buf  bytes.Buffer
	full func()
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if !b.over && b.buf.Len()+len(p) > maxOutput {
		b.over = true
		b.full()
	}
	if b.over {
		return len(p), nil
	}
	return b.buf.Write(p)
}

// wrap makes the model's code the body of an async function (so top-level
// await and return type-check), line for line: a Markdown fence's lines
// become blank, `export default X` becomes `return X`, another `export`
// is dropped.
func wrap(code string) string {
	lines := strings.Split(code, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) != "" })
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

// parseDiagnostics returns the diagnostics of file in a checker's output as "line
// L:C: message (TSnnnn)", with the lines of the program's wrapper taken
// off; a message's continuation lines are joined to it.
func parseDiagnostics(output, file string) []string {
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
		l = max(1, l-wrapLines)
		out = append(out, fmt.Sprintf("line %d:%d: %s (%s)", l, col, m[5], m[4]))
		last = len(out) - 1
	}
	return out
}

// fileRE matches a line of --listFiles: a path to a TypeScript or
// JavaScript file.
var fileRE = regexp.MustCompile(`^\S.*\.(d\.)?[cm]?[jt]sx?$`)

// libRE matches the base name of a file of a checker's standard library.
var libRE = regexp.MustCompile(`^lib(\.[a-z0-9]+)*\.d\.ts$`)

// outsideFiles returns the files a checker's output (--listFiles) says it
// read besides the program and declarations in dir and its standard
// library.
func outsideFiles(output, dir string) []string {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		realDir = dir
	}
	var out []string
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimRight(line, "\r ")
		if !fileRE.MatchString(line) || diagRE.MatchString(line) {
			continue
		}
		base := filepath.Base(line)
		if libRE.MatchString(base) {
			continue
		}
		if base == declsFile || base == programFile {
			switch d := filepath.Dir(line); {
			case !filepath.IsAbs(line) && d == ".", d == dir, d == realDir:
				continue
			}
		}
		out = append(out, line)
	}
	return out
}

// checkerErrors returns, for the error of a failed check, the errors of a
// checker's output that name no file (a bad option, a crash): never a line
// about a file, which could quote it.
func checkerErrors(output string) string {
	var msgs []string
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		// Errors that name no file, and those of the configuration (it is
		// ours: safe to show).
		m := diagRE.FindStringSubmatch(line)
		if strings.HasPrefix(line, "error TS") || m != nil && filepath.Base(m[1]) == configFile {
			msgs = append(msgs, short.Clip(line, 300))
		}
	}
	if len(msgs) == 0 {
		return " (no error names the program; the checker's output is not shown)"
	}
	return ": " + strings.Join(msgs, "; ")
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
