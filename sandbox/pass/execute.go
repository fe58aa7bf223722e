package pass

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// Execute is the body of a Run shared by the executors: the code size
// limit, normalisation through cache, and one pass (see Run).
func Execute(ctx context.Context, p sandbox.Program, host sandbox.Host, cache *source.Cache, log *slog.Logger) (sandbox.Outcome, error) {
	limits := p.Limits.WithDefaults()
	if len(p.Code) > limits.MaxCodeBytes {
		return sandbox.Outcome{
			Status: sandbox.Failed,
			Error:  fmt.Sprintf("code is too large: %d bytes, limit %d", len(p.Code), limits.MaxCodeBytes),
			Clock:  sandbox.Clock{Seed: p.Clock.Seed, Times: p.Clock.Times},
		}, nil
	}
	norm, err := cache.Normalize(p.Code, source.ProgramFile)
	if err != nil {
		var se *source.SyntaxError
		if errors.As(err, &se) {
			return sandbox.Outcome{Status: sandbox.Failed, Error: se.Error(), Clock: sandbox.Clock{Seed: p.Clock.Seed, Times: p.Clock.Times}}, nil
		}
		return sandbox.Outcome{}, err
	}
	return runPass(ctx, norm, p, host, cache.Normalize, log)
}
