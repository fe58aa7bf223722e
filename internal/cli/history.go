package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"text/tabwriter"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

func cmdApprovals(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("approvals", env, &c, true)
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"list"}
	}
	want := func(n int, form string) error {
		if len(pos) != n {
			return usagef("usage: codemode-mcp approvals %s", form)
		}
		return nil
	}
	switch pos[0] {
	case "list":
		if err := want(1, "list"); err != nil {
			return err
		}
		eng, stop, err := openApp(ctx, c, log, false)
		if err != nil {
			return err
		}
		defer stop()
		p, err := eng.Pending(ctx, "")
		if err != nil {
			return err
		}
		if p == nil {
			p = []codemode.PendingAction{}
		}
		return printJSON(env.Stdout, map[string]any{"pending": p})
	case "approve", "rollback":
		if err := want(2, pos[0]+" ID"); err != nil {
			return err
		}
		eng, stop, err := openApp(ctx, c, log, true)
		if err != nil {
			return err
		}
		defer stop()
		var out codemode.Outcome
		if pos[0] == "approve" {
			out, err = eng.Approve(ctx, pos[1], nil)
		} else {
			out, err = eng.Rollback(ctx, pos[1])
		}
		if err != nil {
			return refused(ctx, eng, env, pos[1], err)
		}
		return printOutcome(env.Stdout, out)
	case "reject":
		if len(pos) != 2 && len(pos) != 3 {
			return usagef("usage: codemode-mcp approvals reject ID [SEQ]")
		}
		seq := 0
		if len(pos) == 3 {
			if seq, err = strconv.Atoi(pos[2]); err != nil || seq < 1 {
				return usagef("approvals reject: SEQ %q is not a positive number", pos[2])
			}
		}
		eng, stop, err := openApp(ctx, c, log, false)
		if err != nil {
			return err
		}
		defer stop()
		out, err := eng.Reject(ctx, pos[1], seq)
		if err != nil {
			return refused(ctx, eng, env, pos[1], err)
		}
		return printOutcome(env.Stdout, out)
	}
	return usagef("approvals: unknown action %q (want list, approve, reject or rollback)", pos[0])
}

// refused reports a request the runtime refused because of the execution
// (wrong state, unknown id, changed connectors) as the MCP tools do: an
// error outcome on stdout with the execution's current status and the
// reason, the reason on stderr too, and exit 1. Other errors are returned
// as they are.
func refused(ctx context.Context, r engine, env Env, id string, err error) error {
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
	fs := newFlags("executions", env, &c, true)
	limit := fs.Int("limit", 20, "how many executions, newest first")
	status := fs.String("status", "", "only executions in this status")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
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
		e, entries, err := eng.Execution(ctx, pos[1])
		if err != nil {
			return err
		}
		return printJSON(env.Stdout, struct {
			*codemode.Execution
			Calls []codemode.Entry `json:"calls"`
		}{e, entries})
	}
	if len(pos) != 0 {
		return usagef("usage: codemode-mcp executions [--limit N] [--status S] | show ID | delete ID")
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
	fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tERROR")
	for _, e := range execs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, e.Status, e.CreatedAt.Format("2006-01-02 15:04:05"), visible.Escape(short.Clip(short.FirstLine(e.Error), 80)))
	}
	return tw.Flush()
}

func cmdSnippets(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("snippets", env, &c, true)
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
	eng, stop, err := openApp(ctx, c, log, false)
	if err != nil {
		return err
	}
	defer stop()
	switch {
	case pos[0] == "list" && len(pos) == 1:
		sn, err := eng.Snippets(ctx)
		if err != nil {
			return err
		}
		if sn == nil {
			sn = []codemode.Snippet{}
		}
		return printJSON(env.Stdout, map[string]any{"snippets": sn})
	case pos[0] == "save" && len(pos) == 2:
		if *from == "" {
			return usagef("snippets save: --from ID is required")
		}
		var in json.RawMessage
		if *schema != "" {
			if !json.Valid([]byte(*schema)) {
				return usagef("snippets save: --input-schema is not valid JSON")
			}
			in = json.RawMessage(*schema)
		}
		sn, err := eng.SaveSnippet(ctx, pos[1], *from, *desc, in)
		if err != nil {
			return err
		}
		return printJSON(env.Stdout, map[string]any{"snippet": sn})
	case pos[0] == "delete" && len(pos) == 2:
		if err := eng.DeleteSnippet(ctx, pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deleted snippet %s\n", pos[1])
		return nil
	}
	return usagef("usage: codemode-mcp snippets list | save NAME --from ID [--description D] [--input-schema JSON] | delete NAME")
}
