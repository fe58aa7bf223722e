// Package cli implements the codemode-mcp command line (usageText; the
// README's "Command line"). Main
// is the whole program apart from signal handling, so tests run it in
// process.
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox/worker"
)

// Version is set at build time with -ldflags "-X …/internal/cli.Version=v1.2.3".
var Version = ""

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // runtime failure
	ExitUsage   = 2 // usage or configuration error
)

// Env is what a command runs with.
type Env struct {
	Stdin  io.Reader // nil: os.Stdin
	Stdout io.Writer // belongs to the stdio transport when serving
	Stderr io.Writer
}

// usageError is a bad command line or configuration: exit 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

const usageText = `codemode-mcp: one MCP tool that runs programs against many tool sources

Usage:
  codemode-mcp serve  [--config F] [--transport stdio|sse|http] [--addr 127.0.0.1:8931] [--db F] [--insecure-no-auth] [--metrics-addr 127.0.0.1:9464]
  codemode-mcp run    [--config F] [--db F] (--code 'JS' | FILE | -)
  codemode-mcp types  [--config F] [--db F] [CONNECTOR]
  codemode-mcp check  [--config F] [--db F]
  codemode-mcp check  --url URL [--sse] [--header 'N: V'] [--call TOOL [--args JSON] [--elicitation defaults|decline]] [--no-browser] [--oauth-client-id ID] [--oauth-client-secret-file F] [--oauth-client-metadata-url U] [--oauth-scopes S] [--oauth-grant G] [--oauth-private-key F]
  codemode-mcp login  [--config F] [--db F] [--no-browser] [--no-resume] CONNECTOR
  codemode-mcp logout [--config F] [--db F] [--user SUBJECT] CONNECTOR
  codemode-mcp approvals  [--config F] [--db F] list | approve ID | reject ID [SEQ] | rollback ID
  codemode-mcp executions [--config F] [--db F] [--limit N] [--status S] | show ID [--seq N [--full]] | delete ID
  codemode-mcp snippets   [--config F] [--db F] list | save NAME --from ID [--description D] [--input-schema JSON] | delete NAME
  codemode-mcp console    [--config F] [--db F] [--addr 127.0.0.1:8932]
  codemode-mcp store copy [--from FROM] --to LOC [--config F] [--db F]
  codemode-mcp audit  [--config F] [--db F] [--since 24h|2026-01-31|RFC3339] [--run ID]
  codemode-mcp version [--config F] [--db F]

Config lookup: --config, else $CODEMODE_CONFIG, else ./codemode.yaml; with none,
the built-in notes connector only. Logs go to stderr ($CODEMODE_LOG_LEVEL=debug|info|warn|error,
$CODEMODE_LOG_FORMAT=text|json; log.level and log.format in the config file).
Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
`

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	log := newLogger(env.Stderr, config.Log{})
	if env.Stdin == nil {
		env.Stdin = os.Stdin
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usageText)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	if cmd != "serve" {
		// What the command line decides is the OS user's on this machine
		// (a server's requests are their principal's, or Local's).
		ctx = codemode.WithPerson(ctx, localPerson())
	}
	switch cmd {
	case worker.Subcommand:
		// Hidden: a sandbox worker process, started by the process pool.
		return exitCode(worker.Main(ctx, log), env.Stderr)
	case "version", "--version", "-v":
		return exitCode(cmdVersion(rest, env), env.Stderr)
	case "help", "--help", "-h":
		if len(rest) > 0 && rest[0] != "help" && !strings.HasPrefix(rest[0], "-") {
			// "help run" is "run --help".
			return Main(ctx, []string{rest[0], "--help"}, env)
		}
		fmt.Fprint(env.Stdout, usageText)
		return ExitOK
	}
	run, ok := subcommands[cmd]
	if !ok {
		fmt.Fprintf(env.Stderr, "codemode-mcp: unknown command %q%s\n\n%s", cmd, textdist.DidYouMean(cmd, append(slices.Collect(maps.Keys(subcommands)), "version")), usageText)
		return ExitUsage
	}
	return exitCode(run(ctx, rest, env, log), env.Stderr)
}

// subcommands are the commands of usageText but version, by name.
var subcommands = map[string]func(ctx context.Context, args []string, env Env, log *slog.Logger) error{
	"serve":      cmdServe,
	"run":        cmdRun,
	"types":      cmdTypes,
	"check":      cmdCheck,
	"login":      cmdLogin,
	"logout":     cmdLogout,
	"approvals":  cmdApprovals,
	"executions": cmdExecutions,
	"snippets":   cmdSnippets,
	"console":    cmdConsole,
	"store":      cmdStore,
	"audit":      cmdAudit,
}

// exitCode reports err on stderr and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ex exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	fmt.Fprintf(stderr, "codemode-mcp: %s%s\n", visible.Escape(err.Error()), listHint(err))
	var ue usageError
	var ce *config.Error
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return ExitUsage
	}
	return ExitFailure
}

// listHint tells the user which command lists what a refused request
// named (the engine's messages name no surface), or "".
func listHint(err error) string {
	switch {
	case errors.Is(err, codemode.ErrUnknownExecution):
		return " (list them with: codemode-mcp executions)"
	case errors.Is(err, codemode.ErrUnknownSnippet):
		return " (list them with: codemode-mcp snippets list)"
	}
	return ""
}

// exitError ends a command with a code after it printed its own output.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Environment variables that set the log's level and format, over the
// configuration's log.level and log.format.
const (
	envLogLevel  = "CODEMODE_LOG_LEVEL"
	envLogFormat = "CODEMODE_LOG_FORMAT"
)

// newLogger is the log on w in the format and at the level l asks for
// (log.format, log.level; text at info when unset), under
// CODEMODE_LOG_FORMAT and CODEMODE_LOG_LEVEL when they are set (an
// unknown value is ignored). A line logged with the context of a traced
// run carries its trace and span ids (telemetry.TraceHandler). Main makes
// one before any configuration is read; serve and console make it again
// from the configuration.
func newLogger(w io.Writer, l config.Log) *slog.Logger {
	name := cmp.Or(os.Getenv(envLogLevel), l.Level)
	if strings.EqualFold(name, "warning") {
		name = "warn"
	}
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(name)) // an unknown name leaves it at info
	format := l.Format
	if v := strings.ToLower(os.Getenv(envLogFormat)); v == config.LogText || v == config.LogJSON {
		format = v
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == config.LogJSON {
		// A duration is written as text ("1.5s"), as in text lines, not
		// as JSON's count of nanoseconds.
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(telemetry.TraceHandler(h))
}

// common holds the flags most commands share.
type common struct {
	config string
	db     string
}

// newFlags returns the flag set of a sub-command with --config and --db.
func newFlags(name string, env Env, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	// parse prints the usage itself, to stdout for --help, to stderr after
	// a flag error.
	fs.Usage = func() {}
	fs.StringVar(&c.config, "config", "", "config file (YAML or JSON; Claude Desktop / VS Code mcpServers files work as-is)")
	fs.StringVar(&c.db, "db", "", "SQLite file or postgres:// URL (overrides store.path)")
	return fs
}

// parse parses flags, allowing flags after positional arguments
// ("approvals approve ID --config F"); after "--" every argument is
// positional (an id that begins with "-" is not taken for a flag). --help
// or -h prints the sub-command's usage on out and ends it with exit 0; a
// bad flag prints the usage on the flag set's output and is a usage error,
// which exitCode prints escaped (the flag package would print it as
// typed, hidden characters and all, so it is not let print).
func parse(fs *flag.FlagSet, args []string, out io.Writer) ([]string, error) {
	var pos []string
	w := fs.Output()
	for {
		fs.SetOutput(io.Discard)
		err := fs.Parse(args)
		fs.SetOutput(w)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(out, fs)
				return nil, exitError{ExitOK}
			}
			printUsage(w, fs)
			return nil, usageError{err}
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseNone parses the flags of a command that takes no arguments.
func parseNone(fs *flag.FlagSet, args []string, out io.Writer) error {
	pos, err := parse(fs, args, out)
	if err == nil && len(pos) > 0 {
		err = usagef("%s takes no arguments, got %q", fs.Name(), pos)
	}
	return err
}

// printUsage writes a sub-command's synopsis (its line of usageText) and
// its flags, written --name as the README and the synopses write them
// (Go's flag package takes one dash or two).
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage:")
	for line := range strings.Lines(usageText) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "codemode-mcp" && f[1] == fs.Name() {
			fmt.Fprint(w, line)
		}
	}
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if arg != "" {
			head += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", head, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// loadConfig finds and loads the configuration.
func loadConfig(c common) (*config.Config, error) {
	path, err := config.Find(c.config)
	if err != nil {
		return nil, usageError{err}
	}
	if path == "" {
		return config.Default(), nil
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, usageError{err} // a missing or invalid config file: exit 2
	}
	return cfg, nil
}

// openApp loads the configuration and starts it; without connectors when
// the command only reads the store. stop stops everything it started.
func openApp(ctx context.Context, c common, log *slog.Logger, withConnectors bool) (*rt.Runtime, func(), error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, nil, err
	}
	if !withConnectors {
		cfg.Connectors = nil
	}
	a, err := app.Open(ctx, cfg, app.Options{DBPath: c.db, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return a.Runtime, closer(a, log), nil
}

// closer returns a func that closes a, logging a failure.
func closer(a *app.App, log *slog.Logger) func() {
	return func() {
		if err := a.Close(); err != nil {
			log.Warn("shutdown", "err", err)
		}
	}
}

// openScratch starts cfg for the commands that need the connectors but not
// the history (check, types): with its store at db when --db was given,
// else in a temporary directory (the built-in notes connector needs a
// database, and these commands must not create one beside the config; the
// store is a real file because it runs in WAL mode), the configured store
// then opened as it is (app.OpenAsIs: nothing created, migrated or set up
// in it) when the configuration has url connectors, for their sign-ins
// (check says who needs one), or always with probe (check: serve and run
// start only if it opens). It returns the app, how the configured store
// stands (OpenAsIs's note) and a func that stops everything and removes
// the temporary directory.
func openScratch(ctx context.Context, cfg *config.Config, db string, probe bool, log *slog.Logger) (*app.App, string, func(), error) {
	opts := app.Options{DBPath: db, Logger: log}
	cleanup := func() {} // what closing the app leaves to do
	var note string
	if db == "" {
		var tokens app.Store
		if probe || slices.ContainsFunc(cfg.Connectors, config.Connector.Remote) {
			var err error
			if tokens, note, err = app.OpenAsIs(ctx, cfg, log); err != nil {
				return nil, "", nil, err
			}
		}
		dir, err := os.MkdirTemp("", "codemode-scratch-")
		cleanup = func() {
			if tokens != nil {
				tokens.Close()
			}
			if err := os.RemoveAll(dir); err != nil { // ("" when MkdirTemp failed: nothing)
				log.Warn("remove the temporary store", "dir", dir, "err", err)
			}
		}
		if err != nil {
			cleanup()
			return nil, "", nil, fmt.Errorf("temporary store: %w", err)
		}
		opts.DBPath, opts.Tokens = filepath.Join(dir, "codemode.db"), tokens
	}
	a, err := app.Open(ctx, cfg, opts)
	if err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return a, note, func() { closer(a, log)(); cleanup() }, nil
}
