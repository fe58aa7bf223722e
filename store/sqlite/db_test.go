package sqlite

import (
	"bytes"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

func TestAnonymous(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`UPDATE t SET a = $1 WHERE b = $2 AND c = $3`, `UPDATE t SET a = ? WHERE b = ? AND c = ?`},
		{`VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		// Out of order or used twice: left numbered.
		{`SELECT substr(a, 1, $2) FROM t WHERE id = $1`, `SELECT substr(a, 1, $2) FROM t WHERE id = $1`},
		{`SELECT $1, $1`, `SELECT $1, $1`},
		{`SELECT $1, $3`, `SELECT $1, $3`},
		{`SELECT '$'`, `SELECT '$'`},
	}
	for _, tt := range tests {
		if got := anonymous(tt.in); got != tt.want {
			t.Errorf("anonymous(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A row ListExecutions cannot read is logged once per process, not at
// every list (recovery lists the running runs at every heartbeat).
func TestUnreadableRowIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := t.Context()
	for _, id := range []string{"exec_ok", "exec_bad"} {
		if err := s.CreateExecution(ctx, storetest.NewExecution(id, codemode.StatusRunning)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE executions SET status = 'exploded' WHERE id = 'exec_bad'`); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if list, err := s.ListExecutions(ctx, codemode.ExecutionFilter{}); err != nil || len(list) != 1 {
			t.Fatalf("ListExecutions = %d runs, %v; want exec_ok", len(list), err)
		}
	}
	if n := strings.Count(logs.String(), "exec_bad"); n != 1 {
		t.Errorf("the unreadable row is logged %d times over three lists, want once:\n%s", n, logs.String())
	}
}
