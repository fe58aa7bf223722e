package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
)

// A store path that names a directory, or a file that is not a database,
// is refused with a message that names the path once and says what to
// write instead; not SQLite's "unable to open database file (14)".
func TestOpenStoreRefusesWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database, but long enough to have a header's worth of bytes in it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ location, want string }{
		{dir, "store " + dir + " is a directory: name the SQLite file (store.path or --db), such as " + filepath.Join(dir, "codemode.db")},
		{notDB, "open store " + notDB + ": begin migration: file is not a database (26)"},
	} {
		st, err := OpenStore(context.Background(), config.Default(), tc.location, nil)
		if err == nil {
			st.Close()
			t.Errorf("%s: opened", tc.location)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.location, err, tc.want)
		}
	}
}

// A SQLite store reads, in recovery, a journal within four times the
// configured quota of a run's log (store.max_run_log): a larger quota
// lets a pass journal more than the default's 256 MiB, and its journal
// must not be refused for that. (A sparse journal over the bound shows
// the bound without reading gigabytes.)
func TestOpenStorePassesTheRunLogQuota(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Store.MaxRunLog = 512 << 20
	db := filepath.Join(t.TempDir(), "codemode.db")
	st, err := OpenStore(ctx, cfg, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &codemode.Execution{ID: "exec_big", Code: "1", Status: codemode.StatusRunning, Owner: "own_dead"}
	if err := st.CreateExecution(ctx, run); err != nil {
		t.Fatal(err)
	}
	j := st.(codemode.Journaler)
	if err := j.Journal(ctx, run.ID, []codemode.Entry{{ExecutionID: run.ID, Seq: 1, Kind: codemode.KindCall, Connector: "notes", Method: "createNote", State: codemode.EntryExecuting}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(db+"-ahead", run.ID), 3<<30); err != nil { // sparse: over the bound, read by nothing
		t.Fatal(err)
	}
	err = st.RecoverExecution(ctx, &codemode.Execution{ID: run.ID, Status: codemode.StatusError}, codemode.StatusRunning, "own_dead", "unknown")
	if err == nil || !strings.Contains(err.Error(), "3 GiB, over the 2 GiB a journal may be") {
		t.Errorf("recovery of a run with a 3 GiB journal, quota 512 MiB: %v; want it refused over a bound of 2 GiB", err)
	}
}
