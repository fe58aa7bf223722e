package catalog

import "strings"

// Dotted connector names ("github.issues") put connectors in namespaces:
// the sandbox nests them under one global per first segment, typegen
// declares one object per global, and a path such as
// "github.issues.list_for_repo" names a method of github.issues. A name
// that is also another's namespace is refused when the catalog is built
// (New).

// splitPath finds the connector a path starts with: the whole path
// ("github.issues"), or everything before its last dot when that is a
// connector ("github.issues.list_for_repo": connector github.issues,
// method list_for_repo). Method names have no dots. s is nil when neither
// names a connector.
func (c *Catalog) splitPath(path string) (s *Connector, method string, hasMethod bool) {
	if s := c.byName[path]; s != nil {
		return s, "", false
	}
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return nil, "", false
	}
	return c.byName[path[:i]], path[i+1:], true
}

// inNamespace returns the connectors whose names lie under namespace ns
// ("mcp" holds mcp.a and mcp.b.c), in configuration order.
func (c *Catalog) inNamespace(ns string) []*Connector {
	var out []*Connector
	prefix := ns + "." // once: ns is a program's string, of any length
	for _, s := range c.connectors {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}
