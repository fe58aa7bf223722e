package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// ReplaceConnector puts c in the place of the connector named name (a
// stand-in for a downstream that failed to start, which has since been
// reached) and lists c's tools. The configured policy of that source
// (approval globs, revert functions, description) is kept. Passes already
// running keep the catalog they began with; later ones, the tool
// description and search see c.
//
// It fails, leaving the catalog unchanged, when no connector is named
// name, when c is nil or has another name, or when c's tools cannot be
// listed. Either way the runtime does not own c or the connector it
// replaced: the caller closes them (after Close, for c).
func (r *Runtime) ReplaceConnector(ctx context.Context, name string, c connectors.Connector) error {
	if c == nil {
		return errors.New("runtime: replace connector: nil connector")
	}
	if c.Name() != name {
		return fmt.Errorf("runtime: replace connector %s: the new connector is named %q", name, c.Name())
	}
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	cat, _, s, err := r.relistLocked(ctx, name, "replace", func(src Source) (Source, error) {
		src.Connector = c // the policy of the source (approve, revert, description) stays
		return src, nil
	})
	if err != nil {
		return err
	}
	r.cat.Store(cat.with(s))
	r.log.Info("connector replaced", "connector", name, "tools", len(s.tools))
	return nil
}
