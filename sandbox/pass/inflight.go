package pass

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// The connector calls and steps whose host method has not returned are in
// flight, so that a program that ends without awaiting them is told which
// were cancelled (see pass).

// fly puts call seq in flight. No two are in flight under one seq: a
// step's lookup has returned before its value is recorded.
func (ps *pass) fly(seq int, what string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.flying == nil {
		ps.flying = map[int]string{}
	}
	ps.flying[seq] = what
}

// returned takes j out of flight: before its result is delivered.
func (ps *pass) returned(j *hostJob) {
	if j.id == 0 {
		return
	}
	ps.mu.Lock()
	delete(ps.flying, j.id)
	ps.mu.Unlock()
}

// inflightWarning is the log line about calls canceled because the program
// ended while they were in flight, or "".
func inflightWarning(flying map[int]string, status sandbox.Status) string {
	if len(flying) == 0 {
		return ""
	}
	var b strings.Builder
	when := "ended"
	if status == sandbox.Completed {
		when = "returned"
	}
	if len(flying) == 1 {
		fmt.Fprintf(&b, "[warn] 1 call was still in flight when the program %s and was cancelled: ", when)
	} else {
		fmt.Fprintf(&b, "[warn] %d calls were still in flight when the program %s and were cancelled: ", len(flying), when)
	}
	const maxNamed = 5
	for i, seq := range slices.Sorted(maps.Keys(flying)) { // in call order
		if i == maxNamed {
			fmt.Fprintf(&b, " and %d more", len(flying)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s #%d", flying[seq], seq)
	}
	b.WriteString(". Await every call: the result of a call in flight is lost and it may or may not have taken effect.")
	return b.String()
}
