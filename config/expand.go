package config

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

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

func (v *vars) expand(s string) (string, []string, error) {
	var refs []ref
	out, env, err := v.expandAt(s, 0, &refs)
	if err == nil && urlScheme(s) {
		err = checkURLRefs(out, refs)
	}
	return out, env, err
}

// A ref is where a reference's value from the environment stands in an
// expanded string.
type ref struct {
	name       string
	start, end int
}

// expandAt expands s, a default depth levels deep; at the top (refs not
// nil) it notes where each value from the environment went.
func (v *vars) expandAt(s string, depth int, refs *[]ref) (string, []string, error) {
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
		body := s[i+2 : end]
		val, env, err := v.resolve(body, depth)
		if err != nil {
			return "", nil, err
		}
		if refs != nil && len(env) > 0 {
			name, _, _ := strings.Cut(strings.TrimPrefix(body, "env:"), ":-")
			*refs = append(*refs, ref{name, b.Len(), b.Len() + len(val)})
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
		return v.expandAt(def, depth+1, nil)
	}
	return "", nil, fmt.Errorf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
}

func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || isLetter(c) || i > 0 && c >= '0' && c <= '9' {
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

// urlScheme reports whether s, as the file writes it, starts with a URL's
// scheme://: then it is a URL, and references in it are checked by
// checkURLRefs.
func urlScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || !isLetter(scheme[0]) {
		return false
	}
	return strings.IndexFunc(scheme, func(r rune) bool {
		return !(r < utf8.RuneSelf && isLetter(byte(r)) || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// checkURLRefs refuses a value from the environment that would change the
// structure of the URL the file writes. Values go in as written, not
// percent-encoded, as in VS Code's and Claude Desktop's files and in a
// shell: a variable may hold a whole URL or a base URL (it stands before
// the "://", and is not checked), a host, a path, a token already encoded.
// But after the file's scheme:// a value must not end the part it stands
// in: a password holding "@" or "/" would send the request, with part of
// the password, to another host; a client id holding "?" would make the
// rest of a path a query; a token holding "&" or "#" would add a
// parameter or cut the query. Such characters are refused, with the
// variable's name and the encoding to write instead (never the value: it
// may be a secret).
func checkURLRefs(s string, refs []ref) error {
	for _, r := range refs {
		_, before, ok := strings.Cut(s[:r.start], "://")
		if !ok {
			continue // the value brings the scheme: the URL is the variable's
		}
		part, ends := "user information or host", "@/?#"
		switch {
		case strings.Contains(before, "#"):
			part, ends = "fragment", ""
		case strings.Contains(before, "?"):
			part, ends = "query", "&#"
		case strings.Contains(before, "/"):
			part, ends = "path", "?#"
		}
		for _, c := range []byte(s[r.start:r.end]) {
			if strings.IndexByte(ends, c) >= 0 || c <= ' ' || c == 0x7f {
				return fmt.Errorf("the value of ${%s} holds %q, which would end the %s of this URL and change what it names; percent-encode it in the variable (%%%02X)", r.name, string(c), part, c)
			}
		}
	}
	return nil
}
