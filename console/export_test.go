package console

import "time"

// SetClock makes c read the time from now (sessions, sign-ins, ages).
// Call it before c serves.
func SetClock(c *Console, now func() time.Time) { c.auth.now = now }

// MaxSessions bounds the sessions a console keeps.
const MaxSessions = maxSessions

// MaxAttempts bounds the sign-ins under way.
const MaxAttempts = maxAttempts

// MaxPendingRuns bounds the paused runs the pending actions list.
const MaxPendingRuns = maxPendingRuns
