package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
)

// cmdStore is `store copy --to LOC [--db FROM]`: the execution log, its
// snippets and the notes copied to another store (a SQLite file to
// PostgreSQL, or back).
func cmdStore(ctx context.Context, args []string, env Env, log *slog.Logger) (err error) {
	var c common
	fs := newFlags("store", env, &c, true)
	to := fs.String("to", "", "the store to copy to: a SQLite file or a postgres:// URL (required)")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "copy" {
		return usagef("usage: codemode-mcp store copy --to LOC [--db FROM] [--config F]")
	}
	if *to == "" {
		return usagef("store copy: --to is required (a SQLite file or a postgres:// URL)")
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	from, err := app.StorePath(cfg, c.db)
	if err != nil {
		return err
	}
	if !config.IsPostgresURL(from) {
		if _, err := os.Stat(from); err != nil {
			// Opening it would make an empty one: there is nothing to copy.
			return usagef("store copy: no store to copy from at %s (%v)", app.StoreDisplay(from), errors.Unwrap(err))
		}
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
	fmt.Fprintf(env.Stdout, "copied %d executions (%d log entries), %d snippets and %d notes from %s to %s",
		n.Executions, n.Entries, n.Snippets, n.Records, app.StoreDisplay(from), app.StoreDisplay(*to))
	if n.SkippedExecutions+n.SkippedRecords > 0 {
		fmt.Fprintf(env.Stdout, "; %d executions and %d notes were there already and were left as they are", n.SkippedExecutions, n.SkippedRecords)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}
