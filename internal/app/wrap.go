package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// unavailable stands in for a connector that failed to start: its global is
// absent and its tool listing reports why.
type unavailable struct {
	name string
	err  error
}

func (u unavailable) Name() string { return u.name }
func (u unavailable) Tools(context.Context) ([]connectors.Tool, error) {
	return nil, u.err
}
func (u unavailable) Call(context.Context, string, json.RawMessage) (connectors.Result, error) {
	return connectors.Result{}, fmt.Errorf("connector %s is unavailable: %w", u.name, u.err)
}
func (u unavailable) Close() error { return nil }

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
