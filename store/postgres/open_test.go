package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
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

// A database whose migration fails halfway (a table made by hand where a
// later statement of it creates one) is left as it was, the statements of
// that migration before the failure undone, and the error names the
// migration and what failed.
func TestAFailedMigrationLeavesTheDatabaseAsItWas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ms, err := sqlstore.Migrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{ms[0].SQL, ms[1].SQL, ms[2].SQL, ms[3].SQL,
		`CREATE TABLE codemode_schema (version INTEGER NOT NULL); INSERT INTO codemode_schema VALUES (4)`,
		`CREATE TABLE audit (note TEXT)`} { // 0005_people.sql adds columns, then creates the audit
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	schema := func() string {
		t.Helper()
		var s string
		err := conn.QueryRow(ctx, `SELECT (SELECT version FROM codemode_schema)::text || ' ' || string_agg(table_name || '.' || column_name, ' ' ORDER BY table_name, column_name)
			FROM information_schema.columns WHERE table_schema = 'public'`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := schema()
	_, err = Open(ctx, url, Options{})
	if err == nil || !strings.Contains(err.Error(), "migration 0005_people.sql: ") || !strings.Contains(err.Error(), `relation "audit" already exists`) {
		t.Fatalf("Open = %v; want an error naming migration 0005_people.sql and the audit that exists", err)
	}
	if after := schema(); after != before {
		t.Errorf("the database after the failed migration:\n%s\nbefore:\n%s", after, before)
	}
}
