package mcp

import (
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// MinimalEnv names the variables a stdio server gets from our environment
// without asking: what a program needs to find its tools, home and
// temporary directory, and to print text (the set the MCP SDKs pass).
var MinimalEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"}

// childEnv builds a stdio server's environment from ours (environ, as
// os.Environ gives it): the variables cfg lets it inherit, then cfg.Env,
// sorted by name. A variable set in cfg.Env is taken from there alone.
func childEnv(cfg *Config, environ []string) []string {
	keep := func(name string) bool {
		if strings.HasPrefix(strings.ToUpper(name), connectors.ReservedEnvPrefix) {
			return false
		}
		if _, set := cfg.Env[name]; set {
			return false
		}
		return cfg.InheritAll || slices.Contains(MinimalEnv, name) || slices.Contains(cfg.Inherit, name)
	}
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && keep(name) {
			out = append(out, kv)
		}
	}
	for name, value := range cfg.Env {
		out = append(out, name+"="+value)
	}
	slices.Sort(out) // for determinism
	return out
}
