package openapi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/origin"
)

// This file resolves a call of request() to the operations of the
// document it reaches (connectors.Router), so that the rules of those
// operations apply to it: a path that operations.exclude removed is
// refused, and the runtime gives the call the approval verdict of the
// operations it reaches, configuration globs included.

// A route is an operation of the document as request() can reach it.
type route struct {
	// segs are the segments of its whole path template (its server's path
	// and its own), each a glob for connectors.MatchPath ("{id}.json" is
	// "*.json"). A template with a multi-segment parameter is one glob
	// over the whole path instead (whole, segs nil), in which every
	// parameter may take several segments: wider than the template, so
	// only ever stricter.
	segs  []string
	whole string
	op    *Operation
	// tool is its SourceName when it is one of the connector's methods
	// ("" when operations.include left it out, or its name was taken).
	tool string
	// excluded is the operations.exclude pattern that removed it.
	excluded string
}

// makeRoutes makes the routes of every operation of the document that
// request can reach on the base URL, whether operations' filter kept it
// or not (on the first call of Route that has a base URL to resolve: a
// start does not pay for them).
func (c *Connector) makeRoutes() {
	c.byKey = map[routeKey][]int{}
	for i := range c.derived.Methods {
		op := &c.derived.Methods[i].Op
		server := op.Server
		if c.pinned {
			server = pinnedServer(c.calls.base, server)
		}
		r, ok := newRoute(op, server, c.calls.base)
		if !ok {
			continue
		}
		name := methodName(op)
		r.excluded = c.filter.excludedBy(name, op)
		if kept := c.ops[op.SourceName]; kept != nil && kept.Method == op.Method && kept.Path == op.Path {
			r.tool = op.SourceName
		}
		k := routeKey{op.Method, len(r.segs)}
		if r.whole != "" {
			k.segments = -1
		}
		c.byKey[k] = append(c.byKey[k], len(c.routes))
		if op.Method == "GET" {
			k.method = "HEAD"
			c.byKey[k] = append(c.byKey[k], len(c.routes))
		}
		c.routes = append(c.routes, r)
	}
}

// newRoute is the route of op, whose server is serverURL (pinned: see
// pinnedServer), when request can reach it on base's origin; ok is false
// when its server is elsewhere.
func newRoute(op *Operation, serverURL string, base *url.URL) (route, bool) {
	server := base
	if serverURL != "" {
		ref, err := url.Parse(serverURL)
		if err != nil {
			return route{}, false
		}
		server = base.ResolveReference(ref)
	}
	if !origin.Same(server, base) {
		return route{}, false
	}
	r := route{op: op}
	multi := slices.ContainsFunc(op.Params, func(p Param) bool { return p.In == InPath && p.MultiSegment })
	for _, seg := range strings.Split(strings.TrimSuffix(server.Path, "/")+"/"+strings.TrimPrefix(op.Path, "/"), "/") {
		if seg != "" {
			r.segs = append(r.segs, templateVar.ReplaceAllLiteralString(seg, "*"))
		}
	}
	if multi {
		r.whole, r.segs = "/"+strings.Join(r.segs, "/"), nil
	}
	return r, true
}

// reaches reports whether a path (its segments, and whole: them joined)
// reaches r; the request's method was matched by the index (routeKey).
func (r *route) reaches(segs []string, whole string) bool {
	if r.whole != "" {
		return connectors.MatchPath(r.whole, whole)
	}
	if len(segs) != len(r.segs) {
		return false
	}
	for i, g := range r.segs {
		if !connectors.MatchPath(g, segs[i]) {
			return false
		}
	}
	return true
}

// A routeKey indexes the routes a request of a method to a path of a
// number of segments may reach (see route.reaches): the operations of that
// method, and for HEAD those of GET too (servers answer a HEAD with the
// GET's handler). Routes with a multi-segment parameter are under
// segments -1.
type routeKey struct {
	method   string
	segments int
}

// pathForms splits an encoded path into its segments as servers may read
// it: each segment decoded on its own (an encoded '/' stays inside its
// segment), and the path decoded whole and split at '/' and '\'; and
// each of those with every segment cut at ';' when one has a ';' (servers
// such as Tomcat take what follows for path parameters). Empty segments
// are dropped (servers that do not merge them are not more permissive
// than one that does).
func pathForms(escaped string) [][]string {
	var each []string
	for _, s := range strings.Split(escaped, "/") {
		if s == "" {
			continue
		}
		if d, err := url.PathUnescape(s); err == nil {
			s = d
		}
		each = append(each, s)
	}
	forms := [][]string{each}
	add := func(f []string) {
		if !slices.ContainsFunc(forms, func(g []string) bool { return slices.Equal(f, g) }) {
			forms = append(forms, f)
		}
	}
	add(decodedSegments(escaped))
	for _, f := range forms {
		if slices.ContainsFunc(f, func(s string) bool { return strings.Contains(s, ";") }) {
			cut := make([]string, len(f))
			for i, s := range f {
				cut[i], _, _ = strings.Cut(s, ";")
			}
			add(cut)
		}
	}
	return forms
}

// Route resolves a call of request to what it reaches (see
// connectors.Router): the operations whose method and path template it
// matches, in any form a server may read its path, and its path relative
// to the base URL in those forms. It refuses a call that reaches an
// operation operations.exclude removed, or whose path an exclude path
// pattern matches, naming the rule; and a call whose method or path
// request would refuse. Other tools are not generic (ok false).
func (c *Connector) Route(tool string, args json.RawMessage) (connectors.Route, bool, error) {
	if tool != methodRequest {
		return connectors.Route{}, false, nil
	}
	_, r, err := c.routeRequest(args)
	return r, true, err
}

// routeRequest reads a call of request's argument and resolves what it
// reaches (see Route); tg, where it goes, is nil when the connector has no
// base URL.
func (c *Connector) routeRequest(args json.RawMessage) (*target, connectors.Route, error) {
	var base *url.URL
	if c.calls != nil {
		base = c.calls.base
	}
	tg, err := parseRequest(args, base)
	if err != nil {
		return nil, connectors.Route{}, err
	}
	method := tg.method
	r := connectors.Route{RequiresApproval: !isSafeMethod(method)}
	if base == nil {
		return nil, r, nil
	}
	c.routesOnce.Do(c.makeRoutes)
	full := pathForms(tg.path)
	for _, form := range pathForms(tg.rel) {
		p := "/" + strings.Join(form, "/")
		if !slices.Contains(r.Paths, p) {
			r.Paths = append(r.Paths, p)
		}
		if pat := c.filter.excludedPath(p); pat != "" {
			return nil, connectors.Route{}, fmt.Errorf("%s %s: the path is excluded by the connector's operations.exclude pattern %q", method, oneLine(p), pat)
		}
	}
	for _, form := range full {
		whole := "/" + strings.Join(form, "/")
		for _, n := range []int{len(form), -1} {
			for _, i := range c.byKey[routeKey{method, n}] {
				rt := &c.routes[i]
				if !rt.reaches(form, whole) || slices.Contains(r.Tools, rt.tool) && rt.tool != "" {
					continue
				}
				if rt.excluded != "" {
					return nil, connectors.Route{}, fmt.Errorf("%s %s reaches the operation %s (%s %s), which the connector's operations.exclude pattern %q removed",
						method, oneLine(r.Paths[0]), rt.op.SourceName, rt.op.Method, rt.op.Path, rt.excluded)
				}
				if rt.tool != "" {
					r.Tools = append(r.Tools, rt.tool)
				}
			}
		}
	}
	return tg, r, nil
}
