package pass

import (
	"fmt"
	"maps"
	"slices"

	"github.com/dop251/goja"
)

// rejectionTracker remembers the promises rejected with no handler; it is
// goja's PromiseRejectionTracker, used on the VM goroutine only. A program
// that completes while some are still unhandled gets a warning in its logs,
// such as
//
//	[warn] unhandled promise rejection: Error: not found (line 3:9)
//
// since the failure it swallowed is likely a bug (Node would crash).
type rejectionTracker struct {
	next    int
	pending map[*goja.Promise]int // rejected, unhandled -> order
}

func (t *rejectionTracker) track(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		if t.pending == nil {
			t.pending = map[*goja.Promise]int{}
		}
		t.next++
		t.pending[p] = t.next
	case goja.PromiseRejectionHandle:
		delete(t.pending, p)
	}
}

// maxRejectionWarnings bounds the warnings of one pass.
const maxRejectionWarnings = 5

// warnUnhandled logs the rejections still unhandled, oldest first.
func (ps *pass) warnUnhandled() {
	if len(ps.rejections.pending) == 0 {
		return
	}
	order := ps.rejections.pending
	list := slices.SortedFunc(maps.Keys(order), func(a, b *goja.Promise) int { return order[a] - order[b] })
	for i, p := range list {
		if i == maxRejectionWarnings {
			ps.logs.note(fmt.Sprintf("[warn] %d more unhandled promise rejections", len(list)-i))
			break
		}
		ps.logs.note("[warn] unhandled promise rejection: " + ps.failure(p.Result(), nil))
	}
}
