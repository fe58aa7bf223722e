package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// printJSON writes v as indented JSON, with the characters a person
// cannot see for what they are (bidirectional overrides, zero-width and
// other invisible characters) written as \uXXXX escapes, as the console
// and the elicitation prompt show them (internal/visible): the JSON means
// the same (encoding/json escapes the ASCII control characters already,
// and every other such character can only stand inside a string), and a
// person reading `approvals list` sees what will run.
func printJSON(w io.Writer, v any) error {
	b, err := jsontext.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	_ = json.Indent(&out, b, "", "  ") // b is valid JSON
	_, err = io.WriteString(w, visible.Escape(out.String())+"\n")
	return err
}

// printOutcome prints an outcome and turns an error outcome into exit 1.
func printOutcome(w io.Writer, o codemode.Outcome) error {
	if err := printJSON(w, o); err != nil {
		return err
	}
	if o.IsError() {
		return exitError{ExitFailure}
	}
	return nil
}

func cmdRun(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("run", env, &c)
	code := fs.String("code", "", "the program's source")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	src := *code
	switch {
	case src != "" && len(pos) > 0:
		return usagef("run: give the program either with --code or as FILE, not both")
	case src == "" && len(pos) == 0:
		return usagef("run: give the program with --code 'JS', as a FILE, or - for standard input")
	case len(pos) > 1:
		return usagef("run: one FILE at most, got %q", pos)
	case len(pos) == 1 && pos[0] == "-":
		b, err := io.ReadAll(env.Stdin)
		if err != nil {
			return fmt.Errorf("read program from standard input: %w", err)
		}
		src = string(b)
	case len(pos) == 1:
		b, err := os.ReadFile(pos[0])
		if err != nil {
			return usagef("run: %v", err)
		}
		src = string(b)
	}
	if strings.TrimSpace(src) == "" {
		return usagef("run: the program is empty")
	}
	eng, stop, err := openApp(ctx, c, log, true)
	if err != nil {
		return err
	}
	defer stop()
	out, err := eng.Execute(ctx, src, nil)
	if err != nil {
		return err
	}
	return printOutcome(env.Stdout, out)
}

func cmdTypes(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("types", env, &c)
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("types: at most one CONNECTOR, got %q", pos)
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	a, _, done, err := openScratch(ctx, cfg, c.db, false, log)
	if err != nil {
		return err
	}
	defer done()
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	decls, err := a.Runtime.Declarations(name)
	if err != nil {
		return usageError{err}
	}
	_, err = io.WriteString(env.Stdout, decls)
	return err
}

func cmdCheck(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("check", env, &c)
	u := urlFlags(fs)
	if err := parseNone(fs, args, env.Stdout); err != nil {
		return err
	}
	if u.url != "" {
		if c.config != "" || c.db != "" {
			return usagef("check: --url checks one server without a config file or a store; drop --config and --db")
		}
		return checkURL(ctx, u, env, log)
	}
	if u.call != "" || u.elicitation != "" || u.sse || len(u.headers) > 0 || u.clientID != "" || u.clientSecretFile != "" || u.clientMetadataURL != "" || u.scopes != "" || u.grant != "" || u.privateKey != "" {
		return usagef("check: --call, --sse, --header and --oauth-* go with --url")
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "config: %s\n", cmp.Or(cfg.Path, "built-in default (no config file found)"))
	// What connectors log while starting (a server down and "retrying in
	// the background", a document not read) is in check's report already,
	// and check retries nothing: only errors are logged, unless
	// $CODEMODE_LOG_LEVEL asks for more.
	a, note, done, err := openScratch(ctx, cfg, c.db, true, newLogger(env.Stderr, config.Log{Level: "error"}))
	if err != nil {
		return err
	}
	defer done()
	if c.db == "" {
		loc, _ := app.StorePath(cfg, "") // (openScratch opened it)
		if note != "" {
			note = " (" + note + ")"
		}
		fmt.Fprintf(env.Stdout, "store: %s%s\n", visible.Escape(app.StoreDisplay(loc)), note)
	}
	eng, warnings := a.Runtime, a.Warnings
	signIns := signInNeeded(ctx, a.Connectors)
	failed := 0
	notes := map[string][]typegen.Diagnostic{}
	for _, d := range eng.TypeDiagnostics() {
		notes[d.Connector] = append(notes[d.Connector], d)
	}
	for _, ci := range eng.Connectors() {
		if sr := signIns[ci.Name]; sr != nil {
			failed++
			fmt.Fprintf(env.Stdout, "✗ %s: needs a sign-in (%s): run codemode-mcp login %s%s\n", ci.Name, visible.Escape(a.Scrubber.String(sr.Reason)), ci.Name, configFlag(cfg))
			continue
		}
		if ci.NeedsSignIn && slices.ContainsFunc(cfg.Connectors, func(cc config.Connector) bool { return cc.Name == ci.Name && cc.PerUser() }) {
			// Not a failure: nobody has signed in yet, and each person
			// does so from their own run.
			fmt.Fprintf(env.Stdout, "- %s: credentials per user, and nobody has signed in yet: each person signs in from their own run (its tools are listed once someone has)\n", ci.Name)
			continue
		}
		if ci.Error != "" {
			failed++
			fmt.Fprintf(env.Stdout, "✗ %s: %s%s\n", ci.Name, configuredAt(cfg, ci.Name), visible.Escape(ci.Error))
			continue
		}
		var names, approval []string
		for _, t := range ci.Tools {
			names = append(names, t.Name)
			if t.RequiresApproval {
				approval = append(approval, t.Name)
			}
		}
		sort.Strings(names)
		fmt.Fprintf(env.Stdout, "✓ %s: %d tools: %s\n", ci.Name, len(names), visible.Escape(strings.Join(names, ", ")))
		if len(approval) > 0 {
			fmt.Fprintf(env.Stdout, "  requires approval: %s\n", visible.Escape(strings.Join(approval, ", ")))
		}
		printTypeNotes(env.Stdout, notes[ci.Name])
	}
	for _, w := range warnings {
		if strings.Contains(w, " is unavailable: ") {
			continue // already printed with ✗ above
		}
		fmt.Fprintf(env.Stdout, "warning: %s\n", visible.Escape(w))
	}
	if failed > 0 {
		fmt.Fprintf(env.Stdout, "%d connector(s) unavailable\n", failed)
		if len(signIns) > 0 {
			fmt.Fprintf(env.Stdout, "%d need a sign-in: %s\n", len(signIns), strings.Join(slices.Sorted(maps.Keys(signIns)), ", "))
		}
		return exitError{ExitFailure}
	}
	fmt.Fprintln(env.Stdout, "ok")
	return nil
}

// maxTypeNotes bounds the type diagnostics check prints per connector.
const maxTypeNotes = 5

// printTypeNotes prints a connector's type diagnostics, the first few of
// them.
func printTypeNotes(w io.Writer, ds []typegen.Diagnostic) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(w, "  types: %d schema place(s) typed wider than the schema says:\n", len(ds))
	for i, d := range ds {
		if i == maxTypeNotes {
			fmt.Fprintf(w, "    … and %d more\n", len(ds)-maxTypeNotes)
			break
		}
		fmt.Fprintf(w, "    %s\n", visible.Escape(d.String()))
	}
}

// configuredAt is "FILE:LINE: ", where connector name is configured, or
// "" when it is not in a file (the built-in default).
func configuredAt(cfg *config.Config, name string) string {
	i := slices.IndexFunc(cfg.Connectors, func(cc config.Connector) bool { return cc.Name == name })
	if cfg.Path == "" || i < 0 || cfg.Connectors[i].Line == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", visible.Escape(cfg.Path), cfg.Connectors[i].Line)
}

// configFlag is " --config F" when the configuration came from a file.
func configFlag(cfg *config.Config) string {
	if cfg.Path == "" {
		return ""
	}
	return " --config " + cfg.Path
}
