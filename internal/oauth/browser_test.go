package oauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBrowserCommands(t *testing.T) {
	const u = "https://as.example/authorize?a=1&b=2"
	for _, tt := range []struct {
		env, goos string
		want      [][]string
	}{
		{"", "linux", [][]string{{"xdg-open", u}}},
		{"", "darwin", [][]string{{"open", u}}},
		{"", "windows", [][]string{{"rundll32", "url.dll,FileProtocolHandler", u}}},
		{"firefox", "linux", [][]string{{"firefox", u}}},
		{"firefox --new-tab %s:w3m", "linux", [][]string{{"firefox", "--new-tab", u}, {"w3m", u}}},
		{"echo 100%% %s", "linux", [][]string{{"echo", "100%%", u}}},
		{" : ", "linux", nil},
	} {
		if got := browserCommands(tt.env, u, tt.goos); !cmp.Equal(got, tt.want) {
			t.Errorf("browserCommands(%q, %s) = %q, want %q", tt.env, tt.goos, got, tt.want)
		}
	}
}

// $BROWSER names the program that gets the URL, as xdg-open reads it; the
// first command that starts is used.
func TestOpenBrowser(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvBrowser, filepath.Join(dir, "missing")+":"+script)
	b, err := OpenBrowser("https://as.example/authorize?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != "https://as.example/authorize?x=1" {
		t.Errorf("the browser got %q", got)
	}
	t.Setenv(EnvBrowser, filepath.Join(dir, "missing"))
	if _, err := OpenBrowser("https://x"); err == nil || !strings.Contains(err.Error(), "open the URL yourself") {
		t.Errorf("no browser: %v", err)
	}
}
