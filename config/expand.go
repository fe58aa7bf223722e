package config

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// vars expands ${…} references in string values.
//
// Everywhere: ${VAR} (an error when VAR is unset), ${VAR:-default} (default
// when VAR is unset or empty; the default may itself hold references),
// ${env:VAR} (the same as ${VAR}) and $$ for a literal dollar. A '$' before
// anything else is kept as is.
//
// In entries of Claude Desktop / VS Code files (client is set) also the
// variables VS Code defines there: ${workspaceFolder}, ${userHome}; and
// ${input:…}, which only VS Code can prompt for, is a clear error.
//
// expand also returns the values it took from the environment (not the
// defaults written in the file, nor VS Code's own variables): they may be
// secrets wherever they stand (Config.EnvValues).
type vars struct {
	lookup    func(string) (string, bool)
	client    bool
	workspace string // ${workspaceFolder}
	home      string // ${userHome}
}

// maxQuotedRef bounds what an error quotes of a faulty reference (bytes):
// only the reference is quoted, never the whole value, and clipped, since
// the value may be a header with a secret written into the file.
const maxQuotedRef = 16

// maxDefaultDepth bounds how deep ${VAR:-default} references nest in
// defaults: each level scans the rest of the value again, so a deep one
// would take quadratic time; real files nest one or two.
const maxDefaultDepth = 8

func (v *vars) expand(s string) (string, []string, error) { return v.expandAt(s, 0) }

// expandAt expands s, a default depth levels deep.
func (v *vars) expandAt(s string, depth int) (string, []string, error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var b strings.Builder
	var fromEnv []string
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte('$')
			i++
			continue
		}
		end := closingBrace(s, i+2)
		if end < 0 {
			return "", nil, fmt.Errorf("unterminated ${ at %q (write $$ for a literal dollar)", short.Clip(s[i:], maxQuotedRef))
		}
		val, env, err := v.resolve(s[i+2:end], depth)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(val)
		fromEnv = append(fromEnv, env...)
		i = end + 1
	}
	return b.String(), fromEnv, nil
}

// closingBrace returns the index of the '}' closing a "${" whose body starts
// at from, allowing nested ${…} in defaults; -1 if none.
func closingBrace(s string, from int) int {
	depth := 1
	for j := from; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			j++
		case s[j] == '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// resolve returns the value of one reference and the values of the
// environment it took.
func (v *vars) resolve(body string, depth int) (string, []string, error) {
	name, def, hasDef := strings.Cut(body, ":-")
	if v.client {
		switch {
		case name == "workspaceFolder":
			return v.workspace, nil, nil
		case name == "userHome":
			return v.home, nil, nil
		case strings.HasPrefix(name, "input:"):
			return "", nil, fmt.Errorf("${%s} asks VS Code to prompt for a value, which codemode-mcp cannot do; use an environment variable instead, e.g. ${env:%s}", name, envName(strings.TrimPrefix(name, "input:")))
		}
	}
	name = strings.TrimPrefix(name, "env:")
	if !isVarName(name) {
		return "", nil, fmt.Errorf("bad variable name %q in ${…} (letters, digits and _; write $$ for a literal dollar)", short.Clip(name, maxQuotedRef))
	}
	if val, ok := v.lookup(name); ok && (val != "" || !hasDef) {
		return val, []string{val}, nil
	}
	if hasDef && depth == maxDefaultDepth {
		return "", nil, fmt.Errorf("${VAR:-default} nested more than %d deep", maxDefaultDepth)
	}
	if hasDef {
		return v.expandAt(def, depth+1)
	}
	return "", nil, fmt.Errorf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
}

func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// envName suggests an environment variable name for a VS Code input id.
func envName(id string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToUpper(id))
	return cmp.Or(name, "VALUE")
}
