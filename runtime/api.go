package runtime

import (
	"context"
)

// A TypeChecker checks a program's TypeScript against declarations
// (internal/tscheck runs tsgo or tsc). Check returns one line per type
// error, "line L:C: message", with L:C in the program as written; err is
// a failure of the checker itself. It must be safe for concurrent use.
type TypeChecker interface {
	Check(ctx context.Context, code, declarations string) ([]string, error)
}
