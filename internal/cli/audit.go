package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/user"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// localPerson is who acts through the command line: Local, named by the
// operating system's user (USER when the user database has no name).
func localPerson() codemode.Person {
	p := codemode.Local
	if u, err := user.Current(); err == nil && u.Username != "" {
		p.Name = u.Username
	} else {
		p.Name = os.Getenv("USER")
	}
	return p
}

// cmdAudit is `audit [--since D] [--run ID]`: the audit as JSON lines,
// oldest first.
func cmdAudit(ctx context.Context, args []string, env Env, log *slog.Logger) error {
	var c common
	fs := newFlags("audit", env, &c)
	since := fs.String("since", "", "only records from then on: a duration back from now (24h), a date (2026-01-31) or an RFC 3339 time")
	run := fs.String("run", "", "only the records about this execution")
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: codemode-mcp audit [--since D] [--run ID] [--config F]")
	}
	q := codemode.AuditQuery{ExecutionID: *run}
	if *since != "" {
		if q.Since, err = parseSince(*since, time.Now()); err != nil {
			return usageError{err}
		}
	}
	eng, stop, err := openApp(ctx, c, log, false)
	if err != nil {
		return err
	}
	defer stop()
	recs, err := eng.Audit(ctx, q)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		// (On stderr: stdout stays JSON lines, here none.)
		what := "no audit records"
		if q.ExecutionID != "" {
			what += " about execution " + q.ExecutionID
		}
		if *since != "" {
			what += " since " + q.Since.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(env.Stderr, "codemode-mcp: %s\n", visible.Escape(what))
		return nil
	}
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		// Hidden characters (a name's) escaped, as printJSON writes them.
		if _, err := fmt.Fprintln(env.Stdout, visible.Escape(string(b))); err != nil {
			return err
		}
	}
	return nil
}

// parseSince reads --since: a duration back from now, a date (midnight
// UTC) or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			// (The audit keeps Unix nanoseconds, which end in 2262.)
			if last := time.Unix(0, math.MaxInt64); t.After(last) {
				t = last
			} else if t.Before(time.Unix(0, 0)) {
				t = time.Time{} // from the first record
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("audit: --since %q is not a duration (24h), a date (2026-01-31) or an RFC 3339 time", s)
}
