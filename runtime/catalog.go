package runtime

import (
	"context"
	"fmt"
	"reflect"

	"github.com/codemode-mcp/codemode-mcp/typegen"
)

// The runtime serves the catalog it holds (package catalog): the one a
// pass begins with stays its own, and RefreshConnector swaps in a new one.

// Declarations returns the TypeScript declarations of one connector, of
// the connectors in a namespace, or with connector "" of every available
// connector preceded by the codemode global's (catalog.Catalog.Declarations).
func (r *Runtime) Declarations(connector string) (string, error) {
	return r.catalog().Declarations(connector)
}

// DeclarationsWithin returns Declarations("") when it fits budget tokens
// (catalog.Catalog.DeclarationsWithin).
func (r *Runtime) DeclarationsWithin(budget int) (decls string, fits bool) {
	return r.catalog().DeclarationsWithin(budget)
}

// TypeDiagnostics reports what the declarations of the available
// connectors do not express exactly (see typegen.Diagnostic).
func (r *Runtime) TypeDiagnostics() []typegen.Diagnostic { return r.catalog().TypeDiagnostics() }

// RefreshConnector lists the tools of connector name again (it announced a
// change, or came back different) and reports whether what programs and
// clients see of it changed. Passes running keep the catalog they began
// with; a paused run that used the connector is refused on approval when
// its tools changed. When listing fails the catalog is unchanged.
func (r *Runtime) RefreshConnector(ctx context.Context, name string) (bool, error) {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	cat := r.catalog()
	old := cat.Connector(name)
	if old == nil {
		return false, fmt.Errorf("runtime: refresh: unknown connector %q", name)
	}
	if rf := old.Caps.Refresher; rf != nil {
		if err := rf.Refresh(ctx); err != nil {
			return false, fmt.Errorf("runtime: refresh connector %s: %w", name, err)
		}
	}
	s := cat.Build(ctx, old.Source)
	if s.Err != nil {
		return false, fmt.Errorf("runtime: refresh connector %s: %w", name, s.Err)
	}
	if reflect.DeepEqual(old.Info(), s.Info()) { // the fingerprint derives from the same tools
		return false, nil
	}
	r.cat.Store(cat.With(s))
	r.log.InfoContext(ctx, "connector tools refreshed", "connector", name, "tools", len(s.Methods))
	return true, nil
}
