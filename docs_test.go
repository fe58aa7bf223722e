package codemode_test

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/appdirs"
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

// TestREADMELinuxPaths fails when the README names a Linux folder of
// codemode-mcp under ~/.local or ~/.cache that is not where the binary
// puts its log or its cache (an example once read the log from
// ~/.local/share, where nothing is).
func TestREADMELinuxPaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the README's paths under ~ are Linux's defaults")
	}
	t.Setenv("HOME", "/home/me")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	data, err := appdirs.Data()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := appdirs.Cache()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, d := range []string{data, cache} {
		want["~"+strings.TrimPrefix(d, "/home/me")] = true
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`~/\.(local/[a-z]+|cache)/codemode-mcp`)
	found := 0
	for i, line := range strings.Split(string(b), "\n") {
		for _, p := range named.FindAllString(line, -1) {
			if p == "~/.local/bin/codemode-mcp" {
				continue // where the README installs the binary
			}
			found++
			if !want[p] {
				t.Errorf("README.md:%d names %s; codemode-mcp's folders there are %v", i+1, p, slices.Sorted(maps.Keys(want)))
			}
		}
	}
	if found == 0 {
		t.Fatal("README.md names no folder under ~/.local or ~/.cache: is the pattern stale?")
	}
}
