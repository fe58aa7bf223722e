package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// With no config and no --db, run keeps its log in the data directory
// (created 0700, the database 0600) and writes nothing in the working
// directory; version prints the paths in use.
func TestDefaultPaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the data directory below is Linux's")
	}
	tmp := t.TempDir()
	state, home, work := filepath.Join(tmp, "state"), filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", home)
	t.Setenv("CODEMODE_CONFIG", "")
	t.Chdir(work)

	code, out, errs := run(t, "", "run", "--code", "1")
	var o struct{ Status string }
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &o) != nil || o.Status != "completed" {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	dir := filepath.Join(state, "codemode-mcp")
	db := filepath.Join(dir, "codemode.db")
	for p, want := range map[string]os.FileMode{dir: os.ModeDir | 0o700, db: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, want mode %v", p, err, want)
		}
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) > 0 {
		t.Errorf("the working directory holds %v (%v), want nothing", entries, err)
	}

	code, out, errs = run(t, "", "version")
	for _, want := range []string{"codemode-mcp ", "\nconfig: none (", "\nlog:    " + db + "\n", "\ncache:  " + filepath.Join(home, ".cache", "codemode-mcp") + "\n"} {
		if code != cli.ExitOK || !strings.Contains(out, want) {
			t.Errorf("version: exit %d, stdout lacks %q:\n%s%s", code, want, out, errs)
		}
	}

	// --db and store.path are used as given (relative ones made absolute
	// for the listing), as is store.cache_dir.
	cfg := filepath.Join(work, "codemode.yaml")
	if err := os.WriteFile(cfg, []byte("store:\n  path: ./here.db\n  cache_dir: cache\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "", "version")
	for _, want := range []string{"\nconfig: " + cfg + "\n", "\nlog:    " + filepath.Join(work, "here.db") + "\n", "\ncache:  " + filepath.Join(work, "cache") + "\n"} {
		if code != cli.ExitOK || !strings.Contains(out, want) {
			t.Errorf("version with ./codemode.yaml: exit %d, stdout lacks %q:\n%s", code, want, out)
		}
	}
	if code, out, _ = run(t, "", "version", "--db", "x.db"); code != cli.ExitOK || !strings.Contains(out, "\nlog:    "+filepath.Join(work, "x.db")+"\n") {
		t.Errorf("version --db x.db: exit %d:\n%s", code, out)
	}
	if err := os.WriteFile(cfg, []byte("store:\n  pth: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs = run(t, "", "version"); code != cli.ExitUsage || !strings.Contains(errs, "codemode.yaml:2") {
		t.Errorf("version with a bad config: exit %d, stderr %q", code, errs)
	}
}

// A codemode.db in the working directory, where the log was once kept by
// default, is pointed out when the default is in use, and left alone.
func TestOldDefaultStoreIsPointedOut(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("CODEMODE_CONFIG", "")
	t.Chdir(tmp)
	if err := os.WriteFile("codemode.db", []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "", "run", "--code", "1")
	if code != cli.ExitOK || !strings.Contains(errs, "codemode.db in the working directory is not used") || !strings.Contains(errs, filepath.Join(tmp, "codemode.db")) {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	if b, err := os.ReadFile("codemode.db"); err != nil || string(b) != "old" {
		t.Errorf("the old file was touched: %q, %v", b, err)
	}
	if code, _, errs := run(t, "", "run", "--db", "other.db", "--code", "1"); code != cli.ExitOK || strings.Contains(errs, "not used") {
		t.Errorf("with --db: exit %d, stderr:\n%s", code, errs)
	}
}
