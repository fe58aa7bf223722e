package openapi

import (
	"fmt"
	"path"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Reserved method names: the connector's own methods.
const (
	methodRequest = "request"
	methodSpec    = "spec"
)

// methodName is the sandbox name of an operation: its operationId made an
// identifier (characters that cannot appear in one become '_', runs of '_'
// collapse: "issues/list-for-repo" -> "issues_list_for_repo"; camelCase
// stays), or without an operationId the method and the path's words
// ("GET /repos/{owner}/{repo}" -> "get_repos_owner_repo").
func methodName(op *Operation) string {
	src := op.SourceName
	if src == op.Method+" "+op.Path {
		src = strings.ToLower(op.Method) + "_" + op.Path
	}
	id := connectors.Identifier(src)
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		if id[i] == '_' && (b.Len() == 0 || i+1 == len(id) || id[i+1] == '_') {
			continue // leading, trailing and repeated underscores
		}
		b.WriteByte(id[i])
	}
	name := b.String()
	if !connectors.IsIdentifier(name) {
		name = connectors.Identifier(name)
	}
	return name
}

// A filter selects operations (see Config.Include and Config.Exclude).
type filter struct {
	include, exclude []pattern
}

// pattern is one operation pattern.
type pattern struct {
	text string // as configured
	kind string // "name", "tag" or "path"
	glob string
}

// newFilter checks and compiles include and exclude patterns.
func newFilter(include, exclude []string) (*filter, error) {
	f := &filter{}
	for _, l := range []struct {
		what string
		in   []string
		out  *[]pattern
	}{{"include", include, &f.include}, {"exclude", exclude, &f.exclude}} {
		for _, s := range l.in {
			p, err := parsePattern(s)
			if err != nil {
				return nil, fmt.Errorf("operations %s pattern %q: %w", l.what, s, err)
			}
			*l.out = append(*l.out, p)
		}
	}
	return f, nil
}

func parsePattern(s string) (pattern, error) {
	switch {
	case strings.HasPrefix(s, "tag:"):
		p := pattern{text: s, kind: "tag", glob: strings.TrimPrefix(s, "tag:")}
		_, err := path.Match(p.glob, "")
		return p, err
	case strings.HasPrefix(s, connectors.PathPattern):
		return pattern{text: s, kind: "path", glob: strings.TrimPrefix(s, connectors.PathPattern)}, nil
	}
	_, err := path.Match(s, "")
	return pattern{text: s, kind: "name", glob: s}, err
}

func (p pattern) match(name string, op *Operation) bool {
	switch p.kind {
	case "tag":
		for _, t := range op.Tags {
			if ok, _ := path.Match(p.glob, t); ok {
				return true
			}
		}
		return false
	case "path":
		return connectors.MatchPath(p.glob, op.Path)
	}
	for _, n := range []string{name, op.SourceName} {
		if ok, _ := path.Match(p.glob, n); ok {
			return true
		}
	}
	return false
}

// keep reports whether the operation named name passes the filter.
func (f *filter) keep(name string, op *Operation) bool {
	if f == nil {
		return true
	}
	in := len(f.include) == 0
	for _, p := range f.include {
		if p.match(name, op) {
			in = true
			break
		}
	}
	return in && f.excludedBy(name, op) == ""
}

// excludedBy returns the exclude pattern that removes the operation named
// name, "" when none does.
func (f *filter) excludedBy(name string, op *Operation) string {
	if f == nil {
		return ""
	}
	for _, p := range f.exclude {
		if p.match(name, op) {
			return p.text
		}
	}
	return ""
}

// excludedPath returns the exclude path pattern that matches a path a
// request names, "" when none does.
func (f *filter) excludedPath(p string) string {
	if f == nil {
		return ""
	}
	for _, pat := range f.exclude {
		if pat.kind == "path" && connectors.MatchPath(pat.glob, p) {
			return pat.text
		}
	}
	return ""
}
