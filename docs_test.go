package codemode_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelfContainedDocs fails when a file of the repository cites a
// document that a person who clones it does not have: the design notes
// the project started from lived outside the repository. The why of the
// code belongs in docs/ARCHITECTURE.md, doc comments and BENCHMARKS.md.
func TestSelfContainedDocs(t *testing.T) {
	// Assembled so that this file does not match itself.
	outside := []string{"design" + ".md", "design" + " §", "../" + "shared/", "/work/" + "shared"}
	exts := map[string]bool{".go": true, ".md": true, ".yaml": true, ".yml": true, ".sh": true, ".mjs": true, ".js": true, ".json": true, ".html": true}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "out", "artifacts", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(path)] || strings.HasSuffix(path, "package-lock.json") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) {
					t.Errorf("%s:%d cites %q, which is not in the repository: %s", path, i+1, o, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files; is the test running at the repository root?", checked)
	}
}
