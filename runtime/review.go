package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// Method describes one connector method as the runtime serves it now, for
// a person deciding about a call of it with args: why such a call needs
// approval, whether a rollback can undo it, whether it is read-only.
func (r *Runtime) Method(connector, method string, args json.RawMessage) codemode.MethodInfo {
	t, err := r.catalog().Resolve(connector, method)
	if err != nil {
		return codemode.MethodInfo{}
	}
	rv := t.Conn.Caps.Reverter
	info := codemode.MethodInfo{Known: true, ReadOnly: t.Def.KnownReadOnly(), Revertible: t.RevertJS != "" || rv != nil && rv.Revertible(t.Def.SourceName)}
	v, err := t.Approval(args)
	if err != nil {
		info.ApprovalReason = fmt.Sprintf("%s refuses this call of %s: %s", connector, method, r.connectorRefusal(err))
		return info
	}
	switch v.Why {
	case catalog.WhyConfigPath:
		info.ApprovalReason = fmt.Sprintf("the configuration's approve list for %s matches the path %s", connector, v.Path)
	case catalog.WhyReached:
		x := v.Reached
		info.ApprovalReason = fmt.Sprintf("this call of %s reaches %s (%s), and %s", method, x.Def.Name, x.Def.Route, approvalReason(connector, x.Def.Name, x, v.ReachedWhy))
	default:
		info.ApprovalReason = approvalReason(connector, method, t, v.Why)
	}
	return info
}

// maxRefusalChars bounds a connector's refusal of a call as a person is
// shown it (connectorRefusal).
const maxRefusalChars = 1000

// connectorRefusal is a connector's refusal of a call (catalog.Method.Approval's
// error) as a person is shown it, in the console or the call's log entry:
// scrubbed of every configured secret and clipped, since the connector
// may quote the call's arguments, of any length.
func (r *Runtime) connectorRefusal(err error) string {
	return short.Clip(r.scrub.String(err.Error()), maxRefusalChars)
}

// approvalReason says why a call of method (of tool t) needs approval,
// for the reasons a call of it has itself.
func approvalReason(connector, method string, t *catalog.Method, why catalog.ApprovalWhy) string {
	switch why {
	case catalog.WhyConfig:
		return fmt.Sprintf("the configuration's approve list for %s matches %s", connector, method)
	case catalog.WhyConnectorArg:
		return fmt.Sprintf("%s requires approval for this call of %s", connector, method)
	case catalog.WhyConnector:
		verb, _, _ := strings.Cut(t.Def.Route, " ")
		switch d := t.Def.Annotations.Destructive; {
		case verb != "":
			// An HTTP operation: the verdict is ours, not the API's.
			return fmt.Sprintf("%s is an HTTP %s operation, and codemode-mcp asks before every POST, PUT, PATCH and DELETE (no_approve lifts it)", method, verb)
		case d != nil && *d:
			return fmt.Sprintf("%s marks %s as destructive", connector, method)
		}
		return fmt.Sprintf("%s requires approval for %s", connector, method)
	}
	return ""
}

// notAsShown is the refusal of a decision about pending actions other
// than those pending now.
func notAsShown(id, verb string) error {
	return refusal(codemode.ErrNotAsShown, "execution %s was not %s: its pending actions changed since they were shown (another decision moved it on); review what is pending now", id, verb)
}

// reviewReason is a person's reason for a decision as it is kept: on one
// line, without control characters, at most codemode.MaxReasonChars long.
func reviewReason(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > codemode.MaxReasonChars {
		s = string([]rune(s)[:codemode.MaxReasonChars]) + "…"
	}
	return s
}
