package runtime

import (
	"context"
)

// dispose tells every connector that holds per-execution resources that the
// execution reached a terminal status. It runs once per terminal transition
// (so a completed run that is later rolled back is disposed twice) and never
// on pause. Failures are logged.
func (r *Runtime) dispose(ctx context.Context, id string) {
	ctx = context.WithoutCancel(ctx)
	for _, s := range r.catalog().Connectors() {
		d := s.Caps.Disposer
		if d == nil {
			continue
		}
		if err := d.DisposeExecution(ctx, id); err != nil {
			r.log.WarnContext(ctx, "dispose failed", "connector", s.Name, "execution", id, "err", err)
		}
	}
}
