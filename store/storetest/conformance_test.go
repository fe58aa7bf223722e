package storetest

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
	"github.com/codemode-mcp/codemode-mcp/store/postgres"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		println("stop the PostgreSQL test cluster:", err.Error())
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			println("goleak:", err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

// backends are the stores that must pass the suite: adding a backend is
// adding its row. Each says where a new, empty database is and how to
// open a store there. SQLite runs on a real file; PostgreSQL on a new
// database of the test cluster (internal/pgtest), which is skipped
// without PostgreSQL and fails under CI, which installs it.
var backends = []backend{
	{"sqlite",
		func(t testing.TB) string { return filepath.Join(t.TempDir(), "codemode.db") },
		func(ctx context.Context, path string) (codemode.Store, error) {
			return sqlite.Open(ctx, path, sqlite.Options{})
		},
		func(ctx context.Context, path, query string) error {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				return err
			}
			_, err = db.ExecContext(ctx, query)
			return errors.Join(err, db.Close())
		}},
	{"postgres",
		pgtest.NewDatabase,
		func(ctx context.Context, url string) (codemode.Store, error) {
			return postgres.Open(ctx, url, postgres.Options{})
		},
		func(ctx context.Context, url, query string) error {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			_, err = conn.Exec(ctx, query)
			return errors.Join(err, conn.Close(ctx))
		}},
}

// A backend is a store the suite runs on, named as its package.
type backend struct {
	name  string
	newDB func(t testing.TB) string
	open  func(ctx context.Context, where string) (codemode.Store, error)
	// exec runs a statement on the database, around the store: what
	// another release, or anything else that writes to it, may leave.
	exec func(ctx context.Context, where, query string) error
}

// TestConformance runs the suite on every backend. Another opens a second
// handle on the same database, as a second process (a server and the
// command line, another replica) does.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			where := map[codemode.Store]string{} // subtests run one at a time
			open := func(t *testing.T, w string) codemode.Store {
				s, err := b.open(context.Background(), w)
				if err != nil {
					t.Fatalf("open %s: %v", w, err)
				}
				t.Cleanup(func() {
					if err := s.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				})
				where[s] = w
				return s
			}
			run(t, Factory{
				New:     func(t *testing.T) codemode.Store { return open(t, b.newDB(t)) },
				Another: func(t *testing.T, s codemode.Store) codemode.Store { return open(t, where[s]) },
				Exec: func(t *testing.T, s codemode.Store, query string) {
					t.Helper()
					if err := b.exec(context.Background(), where[s], query); err != nil {
						t.Fatalf("%s: %v", query, err)
					}
				},
			})
		})
	}
}

// TestEveryStoreIsABackend fails when a package under store/ implements a
// store that is not a row of backends: the suite is the contract, and a
// backend it does not run is unchecked. (sqlstore holds the SQL of both
// stores, storetest the suite.)
func TestEveryStoreIsABackend(t *testing.T) {
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "sqlstore" || d.Name() == "storetest" {
			continue
		}
		if !slices.ContainsFunc(backends, func(b backend) bool { return b.name == d.Name() }) {
			t.Errorf("store/%s is not a row of backends (store/storetest/conformance_test.go)", d.Name())
		}
	}
}

// Factory opens the stores the suite tests.
type Factory struct {
	// New opens a store on a new, empty database and closes it when t
	// ends.
	New func(t *testing.T) codemode.Store
	// Another opens one more handle on s's database, as another process
	// sharing it would, and closes it when t ends.
	Another func(t *testing.T, s codemode.Store) codemode.Store
	// Exec runs a statement on s's database, as a tool other than the
	// store would (to leave a row the store cannot read).
	Exec func(t *testing.T, s codemode.Store, query string)
}

// run runs the whole suite on one backend, each check as a subtest.
func run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"ExecutionRoundTrip", testExecutionRoundTrip},
		{"CreateExecutionErrors", testCreateExecutionErrors},
		{"UpdateExecution", testUpdateExecution},
		{"UpdateExecutionErrors", testUpdateExecutionErrors},
		{"UnknownExecution", testUnknownExecution},
		{"ListExecutions", testListExecutions},
		{"ListExecutionsByPage", testListExecutionsByPage},
		{"ListExecutionsSkipsUnreadable", testListExecutionsSkipsUnreadable},
		{"ListExecutionsPastAnEmptyID", testListExecutionsPastAnEmptyID},
		{"DeleteExecutionCascades", testDeleteExecutionCascades},
		{"PruneExecutions", testPruneExecutions},
		{"PruneRace", testPruneRace},
		{"EntriesRoundTrip", testEntriesRoundTrip},
		{"ClippedEntries", testClippedEntries},
		{"UnreadableEntry", testUnreadableEntry},
		{"InsertEntryErrors", testInsertEntryErrors},
		{"UpdateEntry", testUpdateEntry},
		{"UpdateEntryRecordsError", testUpdateEntryRecordsError},
		{"EntryTask", testEntryTask},
		{"WriteEntries", testWriteEntries},
		{"WriteEntriesRace", testWriteEntriesRace},
		{"UpdateEntryRace", testUpdateEntryRace},
		{"ClaimRace", testClaimRace},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Owners", testOwners},
		{"RecoverExecution", testRecoverExecution},
		{"RecoverExecutionErrors", testRecoverExecutionErrors},
		{"RecoverRace", testRecoverRace},
		{"Snippets", testSnippets},
		{"UnreadableSnippet", testUnreadableSnippet},
		{"People", testPeople},
		{"Audit", testAudit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, f) })
	}
	probe := f.New(t)
	if _, ok := probe.(connectors.Records); ok {
		t.Run("Records", func(t *testing.T) { testRecords(t, f) })
		t.Run("ReplaceRecord", func(t *testing.T) { testReplaceRecord(t, f) })
		t.Run("ReplaceRecordRace", func(t *testing.T) { testReplaceRecordRace(t, f) })
	}
	if _, ok := probe.(codemode.Journaler); !ok {
		return // the journal is optional; a store without one commits instead
	}
	journal := []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"JournalIsAppliedByRecovery", testJournalApplied},
		{"JournalNeverUndoes", testJournalNeverUndoes},
		{"DropJournal", testDropJournal},
		{"JournalOfAnotherHandle", testJournalOfAnotherHandle},
		{"JournalErrors", testJournalErrors},
	}
	for _, tt := range journal {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, f) })
	}
}
