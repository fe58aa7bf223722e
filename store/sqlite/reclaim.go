package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Giving the space of deleted runs back.
//
// SQLite keeps the pages a DELETE frees in the file, for the rows that
// come next: a store that once held a large run (up to store.max_run_log
// of values) would keep its size after the run was pruned. So the file is
// in auto_vacuum = INCREMENTAL mode (set at Open, see incrementalMode),
// and the housekeeping's PruneExecutions gives free pages back with PRAGMA
// incremental_vacuum, in steps of reclaimStep pages, each its own short
// write transaction, so that the runs writing their logs meanwhile wait
// for one step at most, never for the whole.
//
// A whole incremental_vacuum or a VACUUM measured far longer and holds the
// write lock throughout (the figures: docs/ARCHITECTURE.md, "Space comes
// back in steps, not by VACUUM").

// Bounds of one housekeeping's reclaiming: steps of reclaimStep pages
// (8 MiB of the default 4 KiB pages), at most reclaimSteps of them; fewer
// free pages than a step are left for new rows.
const (
	reclaimStep  = 2048
	reclaimSteps = 4
)

// PruneExecutions is sqlstore's, then gives some of the space of deleted
// runs back to the file system (reclaim.go).
func (s *Store) PruneExecutions(ctx context.Context, keep int) (int, error) {
	n, err := s.Store.PruneExecutions(ctx, keep)
	if err == nil {
		s.reclaim(ctx)
	}
	return n, err
}

// reclaim gives free pages back to the file system (see above). Failures
// are logged: the space is tried again at the next housekeeping.
func (s *Store) reclaim(ctx context.Context) {
	for range reclaimSteps {
		var free int
		if err := s.db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
			s.logger.WarnContext(ctx, "store: could not count free pages", "path", s.path, "err", err)
			return
		}
		if free < reclaimStep {
			return
		}
		// PRAGMA takes no bound parameters; reclaimStep is a constant.
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", reclaimStep)); err != nil {
			s.logger.WarnContext(ctx, "store: could not give free pages back", "path", s.path, "err", err)
			return
		}
	}
}

// incrementalMode puts the file in auto_vacuum = INCREMENTAL mode if it
// is not: a file made by an older version is rewritten once by a VACUUM
// (its cost grows with the file: 2 s for 68 MiB on the development VM; a
// new file's is a few ms). If that fails (another process holds the write
// lock past the busy timeout), the store works as before and tries again
// at the next Open.
func (s *Store) incrementalMode(ctx context.Context) {
	const incremental = 2
	var mode, size int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil || mode == incremental {
		return
	}
	if err := s.db.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&size); err != nil {
		size = 0 // only for the message
	}
	start := time.Now()
	conn, err := s.db.Conn(ctx) // the mode is set on the connection that vacuums
	if err == nil {
		_, err = conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL")
		if err == nil {
			_, err = conn.ExecContext(ctx, "VACUUM")
		}
		err = errors.Join(err, conn.Close())
	}
	if err != nil {
		s.logger.WarnContext(ctx, "store: could not set the file up to give back the space of pruned runs; it keeps its size until the next start", "path", s.path, "err", err)
		return
	}
	level := slog.LevelDebug // a new file
	if size > 1<<20 {
		level = slog.LevelInfo
	}
	s.logger.Log(ctx, level, "store: set the file up to give back the space of pruned runs (once)", "path", s.path, "bytes", size, "took", time.Since(start).Round(time.Millisecond))
}
