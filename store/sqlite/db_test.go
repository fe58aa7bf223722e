package sqlite

import "testing"

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
