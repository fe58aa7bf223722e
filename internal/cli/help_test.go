package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// Asking a sub-command for help is not a usage error: its synopsis and
// flags go to stdout, as the top-level --help does, and it exits 0.
func TestSubcommandHelp(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string // in stdout besides "Usage:" and "codemode-mcp CMD"
	}{
		{"serve", []string{"-transport", "-addr", "-db", "-config"}},
		{"run", []string{"--code 'JS'", "-code", "-db"}},
		{"types", []string{"[CONNECTOR]", "-config"}},
		{"check", []string{"-config", "--url URL", "-oauth-client-id", "-call"}},
		{"login", []string{"CONNECTOR", "-no-browser", "-config", "-db"}},
		{"logout", []string{"CONNECTOR", "-config", "-db"}},
		{"approvals", []string{"approve ID", "reject ID [SEQ]", "-db"}},
		{"executions", []string{"show ID", "-limit", "-status"}},
		{"snippets", []string{"[--input-schema JSON]", "-input-schema", "-from", "-description"}},
		{"version", []string{"-config", "-db"}},
		{"console", []string{"[--addr 127.0.0.1:8932]", "-addr", "-db", "-config"}},
	}
	for _, tt := range tests {
		for _, flag := range []string{"--help", "-h"} {
			t.Run(tt.cmd+flag, func(t *testing.T) {
				code, out, errs := run(t, "", tt.cmd, flag)
				if code != cli.ExitOK || errs != "" {
					t.Fatalf("exit %d, stderr %q", code, errs)
				}
				for _, w := range append([]string{"Usage:", "codemode-mcp " + tt.cmd}, tt.want...) {
					if !strings.Contains(out, w) {
						t.Errorf("stdout lacks %q:\n%s", w, out)
					}
				}
			})
		}
	}
}

// check and types use no store, so they take no --db.
// A bad flag is still a usage error, with the usage on stderr.
func TestBadFlagIsUsageError(t *testing.T) {
	code, out, errs := run(t, "", "run", "--nope")
	if code != cli.ExitUsage || out != "" || !strings.Contains(errs, "-nope") || !strings.Contains(errs, "codemode-mcp run") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// A bad flag is named once, escaped: the flag package's own message, which
// printed it as typed (a terminal's escape sequences and all), is not
// printed.
func TestBadFlagIsNamedEscaped(t *testing.T) {
	code, out, errs := run(t, "", "run", "--no\x1b]0;owned\x07pe")
	if code != cli.ExitUsage || out != "" || strings.ContainsAny(errs, "\x1b\x07") || strings.Count(errs, "flag provided but not defined") != 1 || !strings.Contains(errs, `-no\u001B]0;owned\u0007pe`) {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// After "--" every argument is positional: an id or a SEQ that begins
// with "-" is not taken for a flag (here, one naming another store).
func TestArgumentsAfterDoubleDashAreNotFlags(t *testing.T) {
	cfg := notesConfig(t)
	other := filepath.Join(t.TempDir(), "other.db")
	code, _, errs := run(t, "", "approvals", "--config", cfg, "reject", "--", "exec_nope", "--db="+other)
	if code == cli.ExitOK {
		t.Fatalf("reject of an unknown run with SEQ %q: exit 0, stderr %q", "--db="+other, errs)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("an argument after -- was taken for --db: %s was opened (stderr %q)", other, errs)
	}
}

func TestTopLevelUsageMentionsInputSchema(t *testing.T) {
	code, out, _ := run(t, "", "--help")
	if code != cli.ExitOK || !strings.Contains(out, "save NAME --from ID [--description D] [--input-schema JSON]") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// Every flag a sub-command takes is in its synopsis, and its help writes
// flags --name, as the README does.
func TestSynopsesNameEveryFlag(t *testing.T) {
	for _, cmd := range []string{"serve", "run", "types", "check", "login", "logout", "approvals", "executions", "snippets", "console", "store", "audit", "version"} {
		_, out, _ := run(t, "", cmd, "--help")
		usage, flags, ok := strings.Cut(out, "\nFlags:\n")
		if !ok {
			t.Fatalf("%s --help has no Flags section:\n%s", cmd, out)
		}
		for _, line := range strings.Split(flags, "\n") {
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			if !strings.HasPrefix(line, "  --") {
				t.Errorf("%s --help writes a flag with one dash: %q", cmd, line)
				continue
			}
			name := strings.Fields(line)[0]
			if !strings.Contains(usage, "["+name) && !strings.Contains(usage, " "+name+" ") && !strings.Contains(usage, "("+name) {
				t.Errorf("%s: the synopsis does not name %s:\n%s", cmd, name, usage)
			}
		}
	}
}

// "help CMD" is "CMD --help"; a mistyped command or action is answered
// with the one meant.
func TestHelpCommandAndDidYouMean(t *testing.T) {
	_, want, _ := run(t, "", "run", "--help")
	if code, out, _ := run(t, "", "help", "run"); code != cli.ExitOK || out != want {
		t.Errorf("help run: %d\n%s\nwant\n%s", code, out, want)
	}
	if code, _, errs := run(t, "", "serv"); code != cli.ExitUsage || !strings.Contains(errs, `unknown command "serv" (did you mean "serve"?)`) {
		t.Errorf("serv: %d %q", code, errs)
	}
	cfg := notesConfig(t)
	if code, _, errs := run(t, "", "approvals", "aprove", "x", "--config", cfg); code != cli.ExitUsage || !strings.Contains(errs, `(did you mean "approve"?)`) {
		t.Errorf("approvals aprove: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "executions", "shwo", "x", "--config", cfg); code != cli.ExitUsage || !strings.Contains(errs, `(did you mean "show"?)`) {
		t.Errorf("executions shwo: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "zzzzzz"); code != cli.ExitUsage || strings.Contains(errs, "did you mean") {
		t.Errorf("a word like no command gets no suggestion: %d %q", code, errs)
	}
}

// A use a command has, given the wrong number of arguments, is named as
// such, not as an unknown use with itself as the suggestion ("unknown use
// "show" (did you mean "show"?)"), before the store is opened (created).
func TestAKnownUseWithTheWrongArguments(t *testing.T) {
	cfg := notesConfig(t)
	db := filepath.Join(t.TempDir(), "never.db")
	for _, args := range [][]string{{"executions", "show"}, {"executions", "delete", "a", "b"}, {"snippets", "save"}, {"snippets", "delete"}, {"snippets", "list", "x"}} {
		code, _, errs := run(t, "", append(args, "--config", cfg, "--db", db)...)
		want := args[0] + " " + args[1] + ": wrong number of arguments"
		if code != cli.ExitUsage || !strings.Contains(errs, want) || strings.Contains(errs, "did you mean") {
			t.Errorf("%v: exit %d, stderr %q; want %q", args, code, errs, want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a usage error created the store's file")
	}
	if code, _, errs := run(t, "", "executions", "shwo", "x", "--config", cfg); code != cli.ExitUsage || !strings.Contains(errs, `unknown use "shwo x" (did you mean "show"?)`) {
		t.Errorf("executions shwo x: exit %d, stderr %q", code, errs)
	}
}

// --limit below 1 is refused as the MCP tool refuses it, naming the flag,
// not read by the store as "no limit" (which listed every execution).
func TestExecutionsLimitBelowOneIsAUsageError(t *testing.T) {
	cfg := notesConfig(t)
	for _, n := range []string{"0", "-5"} {
		code, out, errs := run(t, "", "executions", "--limit", n, "--config", cfg)
		if code != cli.ExitUsage || !strings.Contains(errs, "--limit") || out != "" {
			t.Errorf("--limit %s: exit %d, stdout %q, stderr %q", n, code, out, errs)
		}
	}
}

// snippets save checks its usage (the name, --from, --input-schema)
// before it opens the store: a usage error exits 2 and creates no file.
func TestSnippetsSaveUsageBeforeTheStore(t *testing.T) {
	cfg := notesConfig(t)
	db := filepath.Join(t.TempDir(), "never.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"snippets", "save", "1bad", "--from", "exec_x"}, `invalid snippet name "1bad"`},
		{[]string{"snippets", "save", "x"}, "--from ID is required"},
		{[]string{"snippets", "save", "x", "--from", "exec_x", "--input-schema", "{"}, "--input-schema is not valid JSON"},
		{[]string{"snippets", "delete", "1bad"}, `snippets delete: invalid snippet name "1bad"`},
	} {
		code, _, errs := run(t, "", append(c.args, "--config", cfg, "--db", db)...)
		if code != cli.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a usage error created the store's file")
	}
}
