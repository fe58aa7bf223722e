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
// \xHH, \uHHHH and the rest; any other backslash is an error), unquoted
// values ending at " #".
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
	switch {
	case strings.HasPrefix(v, `"`):
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return "", errors.New("unterminated double quote, or a bad escape in it")
		}
		return strconv.Unquote(q)
	case strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated single quote")
		}
		return v[1 : end+1], nil
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}
