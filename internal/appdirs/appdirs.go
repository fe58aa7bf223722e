// Package appdirs says where codemode-mcp keeps its files when the
// configuration does not: the execution log in the user's data directory,
// fetched OpenAPI documents and what is derived from them in the user's
// cache directory, each in a folder named codemode-mcp.
//
//	           data (store.path)                          cache (store.cache_dir)
//	Linux      $XDG_STATE_HOME/codemode-mcp               $XDG_CACHE_HOME/codemode-mcp
//	           (~/.local/state/codemode-mcp)              (~/.cache/codemode-mcp)
//	macOS      ~/Library/Application Support/codemode-mcp ~/Library/Caches/codemode-mcp
//	Windows    %LocalAppData%\codemode-mcp                %LocalAppData%\codemode-mcp\cache
//
// Linux's column holds for every Unix system but macOS. The log is state
// in XDG's sense (history that should outlive a restart, not documents a
// user would carry to another machine). Nothing here creates a directory.
package appdirs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Name is the folder codemode-mcp uses in each base directory.
const Name = "codemode-mcp"

// Data returns the directory that holds the execution log by default.
func Data() (string, error) { return hostSystem().data() }

// Cache returns the directory that holds fetched OpenAPI documents and
// the methods derived from them by default.
func Cache() (string, error) { return hostSystem().cache() }

// system is what the directories depend on: the operating system, its
// environment and the user's home directory.
type system struct {
	goos   string
	getenv func(string) string
	home   func() (string, error)
}

func hostSystem() system { return system{runtime.GOOS, os.Getenv, os.UserHomeDir} }

func (s system) data() (string, error) {
	switch s.goos {
	case "windows":
		return s.localAppData()
	case "darwin", "ios":
		return s.underHome("Library", "Application Support")
	}
	if d := s.xdg("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, Name), nil
	}
	return s.underHome(".local", "state")
}

func (s system) cache() (string, error) {
	switch s.goos {
	case "windows":
		d, err := s.localAppData()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "cache"), nil
	case "darwin", "ios":
		return s.underHome("Library", "Caches")
	}
	if d := s.xdg("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, Name), nil
	}
	return s.underHome(".cache")
}

// xdg returns an XDG base directory variable when it is set to an absolute
// path (the specification says to ignore a relative one).
func (s system) xdg(name string) string {
	if d := s.getenv(name); d != "" && filepath.IsAbs(d) {
		return d
	}
	return ""
}

func (s system) localAppData() (string, error) {
	d := s.getenv("LocalAppData")
	if d == "" {
		return "", errors.New("%LocalAppData% is not set")
	}
	return filepath.Join(d, Name), nil
}

// underHome returns home/elem…/codemode-mcp.
func (s system) underHome(elem ...string) (string, error) {
	home, err := s.home()
	if err == nil && home == "" {
		err = errors.New("$HOME is not set")
	}
	if err != nil {
		return "", fmt.Errorf("no home directory: %w", err)
	}
	return filepath.Join(append(append([]string{home}, elem...), Name)...), nil
}
