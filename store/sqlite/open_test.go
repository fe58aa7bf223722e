//go:build unix

package sqlite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// TestOpenFileMode checks that the database and its -wal and -shm files are
// private to the owner whatever the umask. It changes the process umask, so
// it must not run in parallel.
func TestOpenFileMode(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o077} {
		t.Run(fs.FileMode(mask).String(), func(t *testing.T) {
			old := syscall.Umask(mask)
			defer syscall.Umask(old)
			path := filepath.Join(t.TempDir(), "codemode.db")
			s := openAt(t, path, Options{})
			// A write makes sure the WAL and shared-memory files exist.
			if err := s.CreateExecution(context.Background(), storetest.NewExecution("exec_mode", codemode.StatusRunning)); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.Mode().Perm(); got != 0o600 {
					t.Errorf("mode of %s = %v, want -rw-------", filepath.Base(p), got)
				}
			}
		})
	}
}

func TestOpenKeepsModeOfExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	openAt(t, path, Options{})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o640 {
		t.Errorf("mode = %v, want the user's -rw-r-----", got)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opts Options
		want string // substring of the error
	}{
		{"missing directory", filepath.Join(dir, "nope", "codemode.db"), Options{}, "create store " + filepath.Join(dir, "nope", "codemode.db") + ": open " + filepath.Join(dir, "nope", "codemode.db") + ": no such file or directory"},
		{"parent is a file", filepath.Join(notDir, "codemode.db"), Options{}, "not a directory"},
		{"empty path", "", Options{}, "store path is empty"},
		{"question mark", filepath.Join(dir, "a?b.db"), Options{}, "must not contain '?'"},
		{"bad synchronous", filepath.Join(dir, "x.db"), Options{Synchronous: "extra"}, `synchronous "extra"`},
		{"not a database", garbage, Options{}, "garbage.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), tt.path, tt.opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestOpenSynchronous(t *testing.T) {
	tests := []struct {
		opt  string
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"", 1}, {"normal", 1}, {"NORMAL", 1}, {"full", 2}, {"Full", 2},
	}
	for _, tt := range tests {
		t.Run(tt.opt, func(t *testing.T) {
			s := openAt(t, filepath.Join(t.TempDir(), "db"), Options{Synchronous: tt.opt})
			var got int
			if err := s.db.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA synchronous = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOpenPragmas checks the per-connection settings every connection of the
// pool must have.
func TestOpenPragmas(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	// Hold two connections at once so both come from the pool's setup.
	for range 2 {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var mode string
		var fk, busy int
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{"wal", 1, 5000}, []any{mode, fk, busy}); diff != "" {
			t.Errorf("journal_mode, foreign_keys, busy_timeout (-want +got):\n%s", diff)
		}
	}
}

func TestMigrationIdempotentOnReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := storetest.NewExecution("exec_keep", codemode.StatusCompleted)
	if err := s.CreateExecution(ctx, want); err != nil {
		t.Fatal(err)
	}
	wantSchema := schemaObjects(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s = openAt(t, path, Options{})
		if diff := cmp.Diff(wantSchema, schemaObjects(t, s)); diff != "" {
			t.Errorf("schema after reopen (-want +got):\n%s", diff)
		}
		var v int
		if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if latest := storetest.SchemaVersion(t, migrationFiles); v != latest || v < 1 {
			t.Errorf("user_version = %d, want %d", v, latest)
		}
		got, err := s.GetExecution(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("execution after reopen (-want +got):\n%s", diff)
		}
	}
}

// schemaObjects lists the tables and indexes of the store.
func schemaObjects(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`SELECT type || ' ' || name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSchemaHasTables(t *testing.T) {
	s := openTemp(t)
	want := []string{
		"table audit",
		"index audit_at",
		"table entries",
		"table executions",
		"index executions_created_at",
		"index executions_started_by",
		"index executions_status",
		"index executions_tasks",
		"table owners",
		"table records",
		"index records_kind_created",
		"table snippets",
	}
	if diff := cmp.Diff(want, schemaObjects(t, s)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

// TestNewerSchemaRefused: a schema version this binary did not write (a
// newer one, or a negative one, which made the migration panic) is refused
// with what it is.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	latest := storetest.SchemaVersion(t, migrationFiles)
	for version, want := range map[int]string{
		latest + 1: fmt.Sprintf("schema version %d is newer than this binary's %d", latest+1, latest),
		-1:         "schema version -1 is not one codemode-mcp writes",
	} {
		path := filepath.Join(t.TempDir(), "codemode.db")
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(ctx, path, Options{})
		if err == nil {
			s.Close()
			t.Fatalf("Open of schema version %d succeeded", version)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error = %q, want it to contain %q", err, want)
		}
	}
}

// TestCloseTwiceAndUseAfterClose checks that Close releases the prepared
// statements once and that a closed store reports errors instead of
// panicking.
func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "codemode.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.InsertEntry(ctx, storetest.NewEntry("exec_x", 1, codemode.EntryExecuting)); err == nil {
		t.Error("InsertEntry after Close succeeded")
	}
	if _, err := s.PruneExecutions(ctx, 1); err == nil {
		t.Error("PruneExecutions after Close succeeded")
	}
}

// TestStatesReadable checks that statuses and states are stored as text a
// person reading the file with the sqlite3 CLI understands.
func TestStatesReadable(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateExecution(ctx, storetest.NewExecution("exec_r", codemode.StatusRolledBack)); err != nil {
		t.Fatal(err)
	}
	e := storetest.NewEntry("exec_r", 1, codemode.EntryPending)
	e.Kind = codemode.KindStep
	if err := s.InsertEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	var status, kind, state string
	if err := s.db.QueryRow(`SELECT status FROM executions`).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow(`SELECT kind, state FROM entries`).Scan(&kind, &state); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"rolled_back", "step", "pending"}, []string{status, kind, state}); diff != "" {
		t.Errorf("stored text (-want +got):\n%s", diff)
	}
}
