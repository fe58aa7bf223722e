package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/textdist"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
)

func cmdApprovals(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("approvals", env, &c)
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"list"}
	}
	form, ok := map[string]string{"list": "list", "approve": "approve ID", "reject": "reject ID [SEQ]", "rollback": "rollback ID"}[pos[0]]
	if !ok {
		return usagef("approvals: unknown action %q%s (want list, approve, reject or rollback)", pos[0], textdist.DidYouMean(pos[0], []string{"list", "approve", "reject", "rollback"}))
	}
	want := len(strings.Fields(form))
	if pos[0] == "reject" && len(pos) == 2 {
		want = 2 // without SEQ
	}
	if len(pos) != want {
		return usagef("usage: codemode-mcp approvals %s", form)
	}
	seq := 0
	if len(pos) == 3 {
		if seq, err = strconv.Atoi(pos[2]); err != nil || seq < 1 {
			return usagef("approvals reject: SEQ %q is not a positive number", pos[2])
		}
	}
	// approve and rollback make calls: they need the connectors.
	eng, stop, err := openApp(ctx, c, log, pos[0] == "approve" || pos[0] == "rollback")
	if err != nil {
		return err
	}
	defer stop()
	var out codemode.Outcome
	switch pos[0] {
	case "list":
		p, err := eng.Pending(ctx, "")
		if err != nil {
			return err
		}
		if p == nil {
			p = []codemode.PendingAction{}
		}
		for i := range p {
			p[i].Args = shownValue(p[i].Args)
		}
		return printJSON(env.Stdout, map[string]any{"pending": p})
	case "approve":
		out, err = eng.Approve(ctx, pos[1], nil)
	case "rollback":
		out, err = eng.Rollback(ctx, pos[1])
	case "reject":
		out, err = eng.Reject(ctx, pos[1], seq)
	}
	if err != nil {
		return refused(ctx, eng, env, pos[1], withoutConfigHint(c, err))
	}
	return printOutcome(env.Stdout, out)
}

// withoutConfigHint adds to a refusal for changed connectors, when no
// configuration file was found, that this is the likely cause: the
// command then serves the built-in notes connector only, so every
// connector the run used looks gone.
func withoutConfigHint(c common, err error) error {
	if !errors.Is(err, codemode.ErrConnectorsChanged) {
		return err
	}
	if path, ferr := config.Find(c.config); ferr != nil || path != "" {
		return err
	}
	return fmt.Errorf("%w. No configuration file was found (no --config, no $CODEMODE_CONFIG, no ./%s), so only the built-in notes connector is configured here: give the file the run was started with (--config FILE)", err, config.DefaultFile)
}

// refused reports a request the runtime refused because of the execution
// (wrong state, unknown id, changed connectors) as the MCP tools do: an
// error outcome on stdout with the execution's current status and the
// reason, the reason on stderr too, and exit 1. Other errors are returned
// as they are.
func refused(ctx context.Context, r *rt.Runtime, env Env, id string, err error) error {
	if !codemode.IsRefusal(err) {
		return err
	}
	o := r.RefusalOutcome(ctx, id, err)
	o.Error += listHint(err)
	if perr := printJSON(env.Stdout, o); perr != nil {
		return perr
	}
	fmt.Fprintf(env.Stderr, "codemode-mcp: %s%s\n", visible.Escape(err.Error()), listHint(err))
	return exitError{ExitFailure}
}

func cmdExecutions(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("executions", env, &c)
	limit := fs.Int("limit", 20, "how many executions, newest first")
	status := fs.String("status", "", "only executions in this status")
	seq := fs.Int("seq", 0, "with show: only this call of the run")
	full := fs.Bool("full", false, "with show --seq N: the call's values whole, however long")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 && (len(pos) != 2 || pos[0] != "show" && pos[0] != "delete") {
		// (Before the store is opened: a usage error creates no file.)
		return unknownUse("executions", pos, []string{"show", "delete"}, "codemode-mcp executions [--limit N] [--status S] | show ID [--seq N [--full]] | delete ID")
	}
	// A flag of another action is refused, not ignored.
	action, name := "", "executions"
	if len(pos) == 2 {
		action, name = pos[0], "executions "+pos[0]
	}
	var stray error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case stray != nil:
		case (f.Name == "seq" || f.Name == "full") && action != "show":
			stray = usagef("%s: --%s goes with show: codemode-mcp executions show ID --seq N [--full]", name, f.Name)
		case (f.Name == "limit" || f.Name == "status") && action != "":
			stray = usagef("%s: --%s goes with the list: codemode-mcp executions [--limit N] [--status S]", name, f.Name)
		}
	})
	if stray != nil {
		return stray
	}
	if *limit < 1 {
		// (The store reads a limit of 0 or less as none: it would list every execution.)
		return usagef("executions: --limit %d is not a positive number", *limit)
	}
	eng, stop, err := openApp(ctx, c, log, false)
	if err != nil {
		return err
	}
	defer stop()
	if len(pos) == 2 && pos[0] == "delete" {
		if err := eng.DeleteExecution(ctx, pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deleted execution %s\n", pos[1])
		return nil
	}
	if len(pos) == 2 && pos[0] == "show" {
		return showExecution(ctx, eng, env, pos[1], *seq, *full)
	}
	f := codemode.ExecutionFilter{Limit: *limit}
	if *status != "" {
		if f.Status, err = codemode.ParseExecStatus(*status); err != nil {
			return usageError{err}
		}
	}
	execs, err := eng.Executions(ctx, f)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tSTARTED BY\tERROR")
	for _, e := range execs {
		// Stored text is escaped, the id too:
		// a store is not trusted to hold only what this server wrote.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", visible.Escape(e.ID), e.Status, e.CreatedAt.Format("2006-01-02 15:04:05"),
			visible.Escape(short.Clip(e.StartedBy.Display(), 40)), visible.Escape(short.Clip(short.FirstLine(e.Error), 80)))
	}
	return tw.Flush()
}

// showChars is what `executions show` prints of a value: a longer one is
// cut, and says how to print it whole.
const showChars = 4000

// showExecution prints run id and its calls as JSON, each value longer
// than showChars characters cut to its start followed by a note of its
// size and of the command that prints it whole; with seq, only that call,
// and with full its values whole. A run's log can hold tens of MiB
// (store.max_run_log): it is read with its values cut, never whole.
func showExecution(ctx context.Context, eng *rt.Runtime, env Env, id string, seq int, full bool) error {
	switch {
	case seq < 0:
		return usagef("executions show: --seq %d is not a call number", seq)
	case full && seq == 0:
		return usagef("executions show: --full needs --seq N (a run's whole log can be large: print one call at a time)")
	}
	q := codemode.LogQuery{Preview: showChars}
	if seq > 0 {
		q.After, q.Limit = seq-1, 1
	}
	if full {
		q.Preview = 0
	}
	e, log, err := eng.ExecutionLog(ctx, id, q)
	if err != nil {
		return err
	}
	calls := make([]codemode.Entry, len(log))
	for i, c := range log {
		calls[i] = shownEntry(e.ID, c)
	}
	if seq > 0 {
		if len(calls) == 0 || calls[0].Seq != seq {
			return fmt.Errorf("execution %s has no call %d", e.ID, seq)
		}
		return printJSON(env.Stdout, calls[0])
	}
	decisions, err := eng.Audit(ctx, codemode.AuditQuery{ExecutionID: e.ID})
	if err != nil {
		return err
	}
	e.Result = shownValue(e.Result)
	return printJSON(env.Stdout, struct {
		*codemode.Execution
		Calls []codemode.Entry `json:"calls"`
		// Decisions are the audit's records of the run: who started it,
		// approved, rejected, cancelled or rolled it back, and when.
		Decisions []codemode.AuditRecord `json:"decisions,omitempty"`
	}{e, calls, decisions})
}

// shownEntry is c as `executions show` prints it: a value that was cut is
// a JSON string, its start, then where the whole is.
func shownEntry(id string, c codemode.ClippedEntry) codemode.Entry {
	en := c.Entry
	note := func(size int) string {
		return fmt.Sprintf("…[cut: %s in the log; codemode-mcp executions show %s --seq %d --full prints it whole]", short.Bytes(int64(size)), id, en.Seq)
	}
	cutJSON := func(v json.RawMessage, size int) json.RawMessage {
		if len(v) == size {
			return shownValue(v)
		}
		return jsontext.AppendString(nil, string(v)+note(size))
	}
	en.Args, en.Result = cutJSON(en.Args, c.Sizes.Args), cutJSON(en.Result, c.Sizes.Result)
	if len(en.Error) < c.Sizes.Error {
		en.Error += note(c.Sizes.Error)
	}
	return en
}

// shownValue is v as `executions show` and `approvals list` print it: v
// itself, or, if it is not JSON (another program's or a hand edit's, in
// the store), a JSON string of its text saying so, so that one unreadable
// value does not fail the command and hide the rest.
func shownValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || json.Valid(v) {
		return v
	}
	return jsontext.AppendString(nil, string(v)+" [not JSON in the log: its text is shown]")
}

func cmdSnippets(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("snippets", env, &c)
	from := fs.String("from", "", "the completed execution to save (with save)")
	desc := fs.String("description", "", "what the snippet does (with save)")
	schema := fs.String("input-schema", "", "JSON Schema of the snippet's input (with save)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"list"}
	}
	if want := map[string]int{"list": 1, "save": 2, "delete": 2}[pos[0]]; len(pos) != want {
		// (Before the store is opened: a usage error creates no file.)
		return unknownUse("snippets", pos, []string{"list", "save", "delete"}, "codemode-mcp snippets list | save NAME --from ID [--description D] [--input-schema JSON] | delete NAME")
	}
	if pos[0] != "list" {
		if err := catalog.CheckSnippetName(pos[1]); err != nil {
			return usagef("snippets %s: %w", pos[0], err)
		}
	}
	var in json.RawMessage
	if pos[0] == "save" {
		if *from == "" {
			return usagef("snippets save: --from ID is required")
		}
		if *schema != "" {
			if !json.Valid([]byte(*schema)) {
				return usagef("snippets save: --input-schema is not valid JSON")
			}
			in = json.RawMessage(*schema)
		}
	}
	eng, stop, err := openApp(ctx, c, log, false)
	if err != nil {
		return err
	}
	defer stop()
	switch pos[0] {
	case "list":
		sn, err := eng.Snippets(ctx)
		if err != nil {
			return err
		}
		if sn == nil {
			sn = []codemode.Snippet{}
		}
		return printJSON(env.Stdout, map[string]any{"snippets": sn})
	case "save":
		sn, err := eng.SaveSnippet(ctx, pos[1], *from, *desc, in)
		if err != nil {
			return err
		}
		return printJSON(env.Stdout, map[string]any{"snippet": sn})
	}
	if err := eng.DeleteSnippet(ctx, pos[1]); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "deleted snippet %s\n", pos[1])
	return nil
}

// unknownUse is the usage error of command cmd given the positional
// arguments pos, which none of its uses takes: an action it has, given
// the wrong number of arguments, says so; another is named with the
// nearest action (of actions) and the usage.
func unknownUse(cmd string, pos, actions []string, usage string) error {
	if slices.Contains(actions, pos[0]) {
		return usagef("%s %s: wrong number of arguments (%d); usage: %s", cmd, pos[0], len(pos)-1, usage)
	}
	return usagef("%s: unknown use %q%s; usage: %s", cmd, strings.Join(pos, " "), textdist.DidYouMean(pos[0], actions), usage)
}
