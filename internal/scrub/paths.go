package scrub

import (
	"regexp"
	"strings"
)

// absPath matches an absolute file system path in a message: a slash after
// a space, a quote, a parenthesis, "=" or the start, then two or more
// segments (so "and/or" and a lone "/" are left alone, and so is the path
// of a URL, which follows "//host").
var absPath = regexp.MustCompile(`(^|[\s"'(=:])(/[^\s"'():/]+(?:/[^\s"'():/]*)+)`)

// Paths returns msg with every absolute file path shortened to "…/" and
// its last element, so that a message about an internal failure can be
// shown to a client without revealing where the server keeps its files.
func Paths(msg string) string {
	if !strings.Contains(msg, "/") {
		return msg
	}
	return absPath.ReplaceAllStringFunc(msg, func(m string) string {
		i := strings.IndexByte(m, '/')
		lead, p := m[:i], strings.TrimRight(m[i:], "/")
		return lead + "…/" + p[strings.LastIndexByte(p, '/')+1:]
	})
}
