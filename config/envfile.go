package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxEnvFile bounds an envFile; real ones are a few lines.
const maxEnvFile = 1 << 20

// readEnvFile reads a dotenv file as VS Code and Cursor do for `envFile`:
// KEY=VALUE lines, blank lines and # comments skipped, an optional
// "export " prefix, values optionally in single (literal) or double quotes
// (with Go's escapes: \n, \t, \" and \\ as dotenv files use them, and
// \xHH, \uHHHH and the rest; any other backslash, \' among them, is an
// error), unquoted values ending at " #". After a closing quote only a
// " #" comment may follow: text there is an error, not dropped. A NUL byte
// is an error: no environment variable can hold one.
func readEnvFile(path string) (map[string]string, error) {
	data, err := readFile(path, maxEnvFile)
	if err != nil {
		return nil, fmt.Errorf("envFile: %w", err)
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !isVarName(key) {
			return nil, fmt.Errorf("envFile %s:%d: expected KEY=VALUE", path, i+1)
		}
		val, err := envValue(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("envFile %s:%d: %v", path, i+1, err)
		}
		out[key] = val
	}
	return out, nil
}

func envValue(v string) (string, error) {
	val, rest := v, ""
	switch {
	case strings.HasPrefix(v, `"`):
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return "", errors.New("unterminated double quote, or a bad escape in it")
		}
		val, _ = strconv.Unquote(q)
		rest = v[len(q):]
	case strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", errors.New("unterminated single quote")
		}
		val, rest = v[1:end+1], v[end+2:]
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			val = strings.TrimSpace(v[:i])
		}
	}
	if rest = strings.TrimSpace(rest); rest != "" && !strings.HasPrefix(rest, "#") {
		return "", errors.New(`text after the closing quote (a comment is " # …")`)
	}
	if strings.IndexByte(val, 0) >= 0 {
		return "", errors.New("the value holds a NUL byte, which no environment variable can")
	}
	return val, nil
}
