package app

import (
	"context"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// wakingExecutor runs passes on the App's executor. Before a pass whose
// program names a connector the retrier is still trying to reach (an
// unavailable global), it asks for an early attempt, within the backoff:
// the model is told the connector is unavailable and will likely try
// again soon.
type wakingExecutor struct {
	sandbox.Executor
	retry *retrier
}

// Run wakes the retrier as described above and runs the pass.
func (w wakingExecutor) Run(ctx context.Context, p sandbox.Program, host sandbox.Host) (sandbox.Outcome, error) {
	for _, g := range p.Globals {
		if g.Unavailable != "" && strings.Contains(p.Code, g.Name) {
			w.retry.wake(g.Name)
		}
	}
	return w.Executor.Run(ctx, p, host)
}
