// Package evict keeps a map of remembered things (sessions, sign-in
// attempts, the addresses that failed to authenticate) within a bound.
package evict

import "time"

// MakeRoom drops from m the values that are over (over nil: none), then,
// while m holds max or more, the value whose stamp is earliest (the least
// recently used, or the oldest, as stamp says), so that one more fits:
// afterwards len(m) < max, or m is empty. Each eviction reads the whole
// map, without allocating; the maps it serves are bounded by max (a few
// thousand) and evict only when a client fills them. It returns the keys
// it dropped, for a caller that ends what they name elsewhere.
func MakeRoom[K comparable, V any](m map[K]V, max int, over func(V) bool, stamp func(V) time.Time) (dropped []K) {
	if over != nil {
		for k, v := range m {
			if over(v) {
				delete(m, k)
				dropped = append(dropped, k)
			}
		}
	}
	for len(m) > 0 && len(m) >= max {
		var oldest K
		var at time.Time
		first := true
		for k, v := range m {
			if s := stamp(v); first || s.Before(at) {
				oldest, at, first = k, s, false
			}
		}
		delete(m, oldest)
		dropped = append(dropped, oldest)
	}
	return dropped
}

// MakeRoomAmong makes room in m for one more of the values mine selects
// (one person's, one client's): while they number max or more, the
// earliest of them by stamp goes, so that one party filling m evicts its
// own, never another's. It returns the keys it dropped.
func MakeRoomAmong[K comparable, V any](m map[K]V, max int, mine func(V) bool, stamp func(V) time.Time) []K {
	theirs := map[K]V{}
	for k, v := range m {
		if mine(v) {
			theirs[k] = v
		}
	}
	dropped := MakeRoom(theirs, max, nil, stamp)
	for _, k := range dropped {
		delete(m, k)
	}
	return dropped
}
