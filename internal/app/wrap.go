package app

import (
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// renamed gives a native connector the name the config chose for it,
// keeping its optional capabilities.
func renamed(c connectors.Connector, name string) connectors.Connector {
	if c.Name() == name {
		return c
	}
	base := named{Connector: c, name: name}
	r, isRev := c.(connectors.Reverter)
	d, isDisp := c.(connectors.Disposer)
	switch {
	case isRev && isDisp:
		return struct {
			named
			connectors.Reverter
			connectors.Disposer
		}{base, r, d}
	case isRev:
		return struct {
			named
			connectors.Reverter
		}{base, r}
	case isDisp:
		return struct {
			named
			connectors.Disposer
		}{base, d}
	}
	return base
}

type named struct {
	connectors.Connector
	name string
}

func (n named) Name() string { return n.name }
