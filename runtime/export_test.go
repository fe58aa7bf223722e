package runtime

import (
	"context"
	"time"
)

// SetGroupAge sets how long r's passes may keep log writes queued (see
// deferred.go): 0 writes every entry as it is queued, as a runtime did
// before writes were grouped.
func SetGroupAge(r *Runtime, d time.Duration) { r.groupAge = d }

// RecoverNow runs the recovery a heartbeat runs and returns how many runs
// it recovered.
func RecoverNow(ctx context.Context, r *Runtime) int { return r.recoverOrphans(ctx) }

// Beat renews r's lease as its heartbeat does.
func Beat(ctx context.Context, r *Runtime) { r.own.beat(ctx) }

// OwnerID is the id r claims runs with.
func OwnerID(r *Runtime) string { return r.own.id }
