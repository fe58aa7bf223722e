package openapi

import (
	"fmt"
	"path"
	"slices"
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
	// Without leading, trailing and repeated underscores.
	name := strings.Join(strings.FieldsFunc(connectors.Identifier(src), func(r rune) bool { return r == '_' }), "_")
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
	for i, s := range append(slices.Clip(include), exclude...) {
		p := pattern{text: s, kind: "name", glob: s}
		if g, ok := strings.CutPrefix(s, "tag:"); ok {
			p.kind, p.glob = "tag", g
		} else if g, ok := strings.CutPrefix(s, connectors.PathPattern); ok {
			p.kind, p.glob = "path", g
		}
		list, what := &f.include, "include"
		if i >= len(include) {
			list, what = &f.exclude, "exclude"
		}
		if _, err := path.Match(p.glob, ""); err != nil && p.kind != "path" {
			return nil, fmt.Errorf("operations %s pattern %q: %w", what, s, err)
		}
		*list = append(*list, p)
	}
	return f, nil
}

func (p pattern) match(name string, op *Operation) bool {
	switch p.kind {
	case "tag":
		return slices.ContainsFunc(op.Tags, func(t string) bool { ok, _ := path.Match(p.glob, t); return ok })
	case "path":
		return connectors.MatchPath(p.glob, op.Path)
	}
	return slices.ContainsFunc([]string{name, op.SourceName}, func(n string) bool { ok, _ := path.Match(p.glob, n); return ok })
}

// keep reports whether the operation named name passes the filter.
func (f *filter) keep(name string, op *Operation) bool {
	in := len(f.include) == 0 || slices.ContainsFunc(f.include, func(p pattern) bool { return p.match(name, op) })
	return in && f.excludedBy(name, op) == ""
}

// excludedBy returns the exclude pattern that removes the operation named
// name, "" when none does.
func (f *filter) excludedBy(name string, op *Operation) string {
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
	for _, pat := range f.exclude {
		if pat.kind == "path" && connectors.MatchPath(pat.glob, p) {
			return pat.text
		}
	}
	return ""
}
