package appdirs

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

// TestDirectories checks the directories of every operating system (the
// selection runs anywhere; only filepath.Join is this machine's).
func TestDirectories(t *testing.T) {
	home := func() (string, error) { return "/home/me", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	for _, tc := range []struct {
		name        string
		goos        string
		env         map[string]string
		home        func() (string, error)
		data, cache string // "" with wantErr
		wantErr     string
	}{
		{name: "linux without XDG", goos: "linux", home: home,
			data: filepath.Join("/home/me", ".local", "state", Name), cache: filepath.Join("/home/me", ".cache", Name)},
		{name: "linux with XDG", goos: "linux", home: noHome, env: map[string]string{"XDG_STATE_HOME": "/x/state", "XDG_CACHE_HOME": "/x/cache"},
			data: filepath.Join("/x/state", Name), cache: filepath.Join("/x/cache", Name)},
		{name: "relative XDG is ignored", goos: "freebsd", home: home, env: map[string]string{"XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "cache"},
			data: filepath.Join("/home/me", ".local", "state", Name), cache: filepath.Join("/home/me", ".cache", Name)},
		{name: "macOS", goos: "darwin", home: home, env: map[string]string{"XDG_STATE_HOME": "/x/state"},
			data: filepath.Join("/home/me", "Library", "Application Support", Name), cache: filepath.Join("/home/me", "Library", "Caches", Name)},
		{name: "windows", goos: "windows", home: noHome, env: map[string]string{"LocalAppData": `C:\Users\me\AppData\Local`},
			data: filepath.Join(`C:\Users\me\AppData\Local`, Name), cache: filepath.Join(`C:\Users\me\AppData\Local`, Name, "cache")},
		{name: "windows without LocalAppData", goos: "windows", home: home, wantErr: "%LocalAppData% is not set"},
		{name: "linux without a home", goos: "linux", home: noHome, wantErr: "no home directory: $HOME is not defined"},
		{name: "macOS with an empty home", goos: "darwin", home: func() (string, error) { return "", nil }, wantErr: "no home directory: $HOME is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := system{goos: tc.goos, getenv: func(k string) string { return tc.env[k] }, home: tc.home}
			data, derr := s.data()
			cache, cerr := s.cache()
			if tc.wantErr != "" {
				for _, err := range []error{derr, cerr} {
					if err == nil || err.Error() != tc.wantErr {
						t.Errorf("error %v, want %q", err, tc.wantErr)
					}
				}
				return
			}
			if derr != nil || cerr != nil || data != tc.data || cache != tc.cache {
				t.Errorf("data %q (%v), cache %q (%v); want %q, %q", data, derr, cache, cerr, tc.data, tc.cache)
			}
		})
	}
}

// TestHost checks the exported functions against this machine's
// environment.
func TestHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the expectations below are Linux's")
	}
	t.Setenv("XDG_STATE_HOME", "/tmp/state")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/tmp/home")
	if d, err := Data(); err != nil || d != "/tmp/state/codemode-mcp" {
		t.Errorf("Data() = %q, %v", d, err)
	}
	if d, err := Cache(); err != nil || d != "/tmp/home/.cache/codemode-mcp" {
		t.Errorf("Cache() = %q, %v", d, err)
	}
}
