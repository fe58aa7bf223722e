package runtime

import (
	"context"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// A TypeChecker checks a program's TypeScript against declarations
// (internal/tscheck runs tsgo or tsc). Check returns one line per type
// error, "line L:C: message", with L:C in the program as written; err is
// a failure of the checker itself. It must be safe for concurrent use.
type TypeChecker interface {
	Check(ctx context.Context, code, declarations string) ([]string, error)
}

// Source is one connector as configured: the connector plus the policy the
// configuration adds to it.
type Source struct {
	Connector connectors.Connector
	// Approve holds globs over method names (sandbox or source names) that
	// require approval in addition to the connector's own verdict; a glob
	// starting with connectors.PathPattern ("path:/admin/*") is over
	// paths instead: an HTTP operation's path template (Tool.Route), and
	// the paths a generic call names (connectors.Router).
	Approve []string
	// NoApprove holds globs over method names (or paths, as Approve) whose
	// calls need no approval although the connector's verdict says they do
	// (Approve wins when both match).
	NoApprove []string
	// Revert maps a method name (sandbox or source name) to the source of a
	// JavaScript function "(args, result) => …" run in the sandbox, with the
	// connectors, to undo an applied call during a rollback.
	Revert map[string]string
	// Description is the configured one-line description; when empty, the
	// connector's own (connectors.Capabilities.Description) is used.
	Description string
	// ForwardUnknown makes a method the connector did not list callable
	// anyway: the call goes to the connector under the name the program
	// used (its Call decides whether it exists), with an input of any
	// object. Such a call is validated, logged and replayed like any
	// other, and requires approval unless NoApprove matches its name.
	ForwardUnknown bool
}
