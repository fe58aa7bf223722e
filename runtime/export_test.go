package runtime

import "time"

// SetGroupAge sets how long r's passes may keep log writes queued (see
// deferred.go): 0 writes every entry as it is queued, as a runtime did
// before writes were grouped.
func SetGroupAge(r *Runtime, d time.Duration) { r.groupAge = d }
