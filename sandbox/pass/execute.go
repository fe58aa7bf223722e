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
	if o, tooLarge := CodeTooLarge(p); tooLarge {
		return o, nil
	}
	norm, err := cache.Normalize(p.Code, source.ProgramFile)
	if se := (*source.SyntaxError)(nil); errors.As(err, &se) {
		return sandbox.Outcome{Status: sandbox.Failed, Error: se.Error(), Clock: p.Clock}, nil
	}
	if err != nil {
		return sandbox.Outcome{}, err
	}
	return runPass(ctx, norm, p, host, cache.Normalize, log)
}

// CodeTooLarge is the outcome of a program whose code is past
// Limits.MaxCodeBytes, which runs nowhere: the pool checks it before the
// code crosses a pipe.
func CodeTooLarge(p sandbox.Program) (o sandbox.Outcome, tooLarge bool) {
	limit := p.Limits.WithDefaults().MaxCodeBytes
	if len(p.Code) <= limit {
		return sandbox.Outcome{}, false
	}
	return sandbox.Outcome{
		Status: sandbox.Failed,
		Error:  fmt.Sprintf("code is too large: %d bytes, limit %d", len(p.Code), limit),
		Clock:  p.Clock,
	}, true
}
