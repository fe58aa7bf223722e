package pass

import (
	"fmt"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"sort"
	"strings"
	"sync"
)

// inFlight tracks the connector calls and steps whose host method has not
// returned, so that a program that ends without awaiting them is told
// which were cancelled (see pass). It is safe for concurrent use.
type inFlight struct {
	mu        sync.Mutex
	next      int
	calls     map[int]callLabel // by id
	cancelled []callLabel       // those in flight when the program ended, in call order
}

// add tracks a call and returns its id (never 0).
func (f *inFlight) add(l callLabel) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[int]callLabel{}
	}
	f.next++
	f.calls[f.next] = l
	return f.next
}

// returned stops tracking call id (0: an untracked job).
func (f *inFlight) returned(id int) {
	if id == 0 {
		return
	}
	f.mu.Lock()
	delete(f.calls, id)
	f.mu.Unlock()
}

// cancel records the calls in flight now as cancelled by the program's end.
func (f *inFlight) cancel() {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]int, 0, len(f.calls))
	for id := range f.calls {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		f.cancelled = append(f.cancelled, f.calls[id])
	}
}

// warning is the log line about the calls cancelled, or "".
func (f *inFlight) warning(status sandbox.Status) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cancelled) == 0 {
		return ""
	}
	return inflightWarning(f.cancelled, status)
}

// inflightWarning is the log line about calls canceled because the program
// ended while they were in flight.
func inflightWarning(calls []callLabel, status sandbox.Status) string {
	var b strings.Builder
	when := "ended"
	if status == sandbox.Completed {
		when = "returned"
	}
	if len(calls) == 1 {
		fmt.Fprintf(&b, "[warn] 1 call was still in flight when the program %s and was cancelled: ", when)
	} else {
		fmt.Fprintf(&b, "[warn] %d calls were still in flight when the program %s and were cancelled: ", len(calls), when)
	}
	const maxNamed = 5
	for i, c := range calls {
		if i == maxNamed {
			fmt.Fprintf(&b, " and %d more", len(calls)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s #%d", c.what, c.seq)
	}
	b.WriteString(". Await every call: the result of a call in flight is lost and it may or may not have taken effect.")
	return b.String()
}
