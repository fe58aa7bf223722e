// Package backoff is the one retry policy of downstreams: a connector that
// is down (an MCP server that exited or could not start, an OpenAPI
// document that could not be fetched) is tried again after First, then
// after twice the previous delay, at most Max.
package backoff

import "time"

// Defaults of a Policy's zero fields.
const (
	DefaultFirst = 500 * time.Millisecond
	DefaultMax   = 30 * time.Second
)

// Policy is a doubling backoff; zero fields take the defaults.
type Policy struct {
	First, Max time.Duration
}

// Delay is the wait before the next attempt after failures consecutive
// failures: none before the first, then First, doubling up to Max.
func (p Policy) Delay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d, limit := p.First, p.Limit()
	if d <= 0 {
		d = DefaultFirst
	}
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Limit is the longest delay (Max, or DefaultMax).
func (p Policy) Limit() time.Duration {
	if p.Max > 0 {
		return p.Max
	}
	return DefaultMax
}
