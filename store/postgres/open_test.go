package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// Replicas that open a new database at the same moment agree on its
// schema: the migration runs once, under the advisory lock, and every
// one of them works on the result.
func TestOpenAtOnceMigratesOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const n = 6
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), url, Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var version, rows int
	if err := stores[0].pool.QueryRow(context.Background(), `SELECT max(version), count(*) FROM codemode_schema`).Scan(&version, &rows); err != nil {
		t.Fatal(err)
	}
	if latest := storetest.SchemaVersion(t, migrationFiles); version != latest || rows != 1 {
		t.Errorf("schema version %d in %d rows, want %d in 1", version, rows, latest)
	}
}

// A database written by a newer release is refused, and left alone.
func TestNewerSchemaIsRefused(t *testing.T) {
	s, url := openTemp(t)
	if _, err := s.pool.Exec(context.Background(), `UPDATE codemode_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), url, Options{})
	if err == nil || !strings.Contains(err.Error(), "is newer than this binary's") {
		t.Fatalf("Open on a newer schema: %v", err)
	}
}

// What Open says about a bad or unreachable URL names it without its
// password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	for _, url := range []string{
		"postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2",
		"postgres://u@127.0.0.1:1/db?password=hunter2&connect_timeout=2",
		"postgres://u@127.0.0.1:1/db?sslpassword=hunter2&connect_timeout=2",
		"postgres://u:hunter2@[::1/db",
	} {
		_, err := Open(context.Background(), url, Options{})
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "store postgres://") {
			t.Errorf("Open(%s): %v; want an error naming the store without its password", url, err)
		}
	}
	if got := Redact("postgres://u:pw@h/db?sslmode=require&password=pw2"); got != "postgres://u:xxxxx@h/db?password=xxxxx&sslmode=require" {
		t.Errorf("Redact = %s", got)
	}
	if got := Redact("postgres://u@h/db?sslkey=/k.pem&sslpassword=keypw"); got != "postgres://u@h/db?sslkey=%2Fk.pem&sslpassword=xxxxx" {
		t.Errorf("Redact of the client key's password = %s", got)
	}
}
