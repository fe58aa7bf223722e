package sqlitestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Timestamps are stored as Unix nanoseconds; ties in ordering are broken by
// rowid (insertion order).

func toNanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// now is the store's clock, truncated to what the column keeps. The store
// only uses it for a timestamp its caller left zero: the runtime stamps
// what it writes with its own (injectable) clock.
func now() time.Time { return time.Now().Round(0).UTC() }

// stamp returns t, or now when t is zero, as the column keeps it.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return fromNanos(toNanos(t))
}

// rawText binds raw JSON as TEXT (readable and usable by SQLite's JSON
// functions), or NULL when empty.
func rawText(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// rawValue is the inverse of rawText: NULL becomes nil.
func rawValue(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// jsonText marshals v to TEXT, or NULL when empty reports true.
func jsonText(v any, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// jsonDecode unmarshals a nullable JSON column into v; NULL leaves v alone.
func jsonDecode(b []byte, v any, column string) error {
	if b == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode column %s: %w", column, err)
	}
	return nil
}

// checkStatus refuses a status that could not be read back.
func checkStatus(s codemode.ExecStatus) error {
	if _, err := codemode.ParseExecStatus(s.String()); err != nil {
		return fmt.Errorf("invalid execution status %d", int(s))
	}
	return nil
}

// checkState refuses a log entry state that could not be read back.
func checkState(s codemode.EntryState) error {
	if _, err := codemode.ParseEntryState(s.String()); err != nil {
		return fmt.Errorf("invalid log entry state %d", int(s))
	}
	return nil
}

// sqliteCode returns the extended SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

func isPrimaryKeyViolation(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

func isForeignKeyViolation(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// terminalStatuses lists the String form of every terminal status.
func terminalStatuses() []any {
	var out []any
	for _, s := range codemode.ExecStatuses() {
		if s.Terminal() {
			out = append(out, s.String())
		}
	}
	return out
}
