package connectors

import (
	"encoding/json"
	"strings"
)

// A Router is the capability (Capabilities.Router) of connectors with a
// generic tool whose calls can reach what their other tools reach: an
// OpenAPI connector's request, which makes any request of its API. Route
// says what a call of tool (by SourceName) with args reaches, so that the
// rules of what it reaches apply to it (see Route); ok is false for a tool
// that is not generic, which its Tool decides. An error refuses the call (it
// reaches what the configuration excluded, or it cannot be made at all) and
// names the rule: the runtime throws it into the program before anything is
// logged or asked, and Call refuses such a call too.
type Router interface {
	Route(tool string, args json.RawMessage) (r Route, ok bool, err error)
}

// A Route is what a call of a generic tool reaches.
type Route struct {
	// Tools are the SourceNames of the connector's tools the call may
	// reach: several when its target can be read as more than one of
	// theirs (servers differ in how they read a path), none when it
	// reaches none. The call needs approval when any of them does, as a
	// call of it would (configuration globs included).
	Tools []string
	// Paths are the path the call names, relative to the connector's
	// base, in each form a server may read it; the configuration's
	// PathPattern globs match them (MatchPath).
	Paths []string
	// RequiresApproval is the connector's own verdict on a call that
	// reaches none of its tools (an HTTP method's rule).
	RequiresApproval bool
}

// PathPattern starts a pattern over HTTP paths rather than names, in the
// configuration's approve and no_approve lists ("path:/admin/*") and an
// OpenAPI connector's operations filter: the rest is a glob for MatchPath,
// matched against an operation's path template (Tool.Route's path) and
// against the paths a generic call names (Route.Paths).
const PathPattern = "path:"

// MatchPath reports whether glob matches path: '*' matches any run of
// characters, '/' included; every other character stands for itself,
// regardless of ASCII case (some servers read paths so, and a pattern
// that decides approval or exclusion must not be walked around by
// writing a path in capitals).
func MatchPath(glob, path string) bool {
	// The classic wildcard match: on a mismatch, the last '*' takes one
	// more character and matching resumes after it.
	g, p := 0, 0
	star, from := -1, 0
	for p < len(path) {
		switch {
		case g < len(glob) && glob[g] == '*':
			star, from = g, p
			g++
		case g < len(glob) && lower(glob[g]) == lower(path[p]):
			g++
			p++
		case star >= 0:
			from++
			g, p = star+1, from
		default:
			return false
		}
	}
	return strings.Trim(glob[g:], "*") == ""
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
