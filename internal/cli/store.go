package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/codemode-mcp/codemode-mcp/internal/app"
)

// cmdStore is `store copy [--from FROM] --to LOC`: the execution log, its
// snippets and the notes copied to another store (a SQLite file to
// PostgreSQL, or back). --from names the source as --db does elsewhere;
// without either, the source is the configured store.
func cmdStore(ctx context.Context, args []string, env Env, log *slog.Logger) (err error) {
	var c common
	fs := newFlags("store", env, &c)
	to := fs.String("to", "", "the store to copy to: a SQLite file or a postgres:// URL (required)")
	fromFlag := fs.String("from", "", "the store to copy from (default: --db, then the configured store)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "copy" {
		return usagef("usage: codemode-mcp store copy [--from FROM] --to LOC [--config F]")
	}
	if *to == "" {
		return usagef("store copy: --to is required (a SQLite file or a postgres:// URL)")
	}
	if *fromFlag != "" {
		if c.db != "" && c.db != *fromFlag {
			return usagef("store copy: --from and --db name different stores; give one")
		}
		c.db = *fromFlag
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	from, err := app.StorePath(cfg, c.db)
	if err != nil {
		return err
	}
	if err := app.StoreMissing(from); err != nil {
		// Opening it would make an empty one: there is nothing to copy.
		return usagef("store copy: no store to copy from at %s (%v)", app.StoreDisplay(from), errors.Unwrap(err))
	}
	if app.StoreDisplay(from) == app.StoreDisplay(*to) {
		return usagef("store copy: --to is the store it copies from (%s)", app.StoreDisplay(from))
	}
	// The source opens as the application opens it (without connectors),
	// so that a run whose server died is recovered first.
	cfg.Connectors = nil
	src, err := app.Open(ctx, cfg, app.Options{DBPath: from, Logger: log})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	dst, err := app.OpenStore(ctx, cfg, *to, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dst.Close()) }()
	n, err := app.CopyStore(ctx, dst, src.Store)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "copied %d executions (%d log entries), %d snippets, %d notes and %d audit records from %s to %s",
		n.Executions, n.Entries, n.Snippets, n.Records, n.Audit, app.StoreDisplay(from), app.StoreDisplay(*to))
	if n.AuditKept {
		fmt.Fprint(env.Stdout, "; the destination's audit was not empty and was left as it is")
	}
	if n.SkippedExecutions+n.SkippedRecords > 0 {
		fmt.Fprintf(env.Stdout, "; %d executions and %d notes were there already and were left as they are", n.SkippedExecutions, n.SkippedRecords)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}
