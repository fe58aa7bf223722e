package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
