package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Method describes one connector method as the runtime serves it now, for
// a person deciding about a call of it with args: why such a call needs
// approval, whether a rollback can undo it, whether it is read-only.
func (r *Runtime) Method(connector, method string, args json.RawMessage) codemode.MethodInfo {
	t, err := r.catalog().resolve(connector, method)
	if err != nil {
		return codemode.MethodInfo{}
	}
	info := codemode.MethodInfo{Known: true, ReadOnly: t.def.KnownReadOnly(), Revertible: t.revertJS != ""}
	if rv, ok := t.src.src.Connector.(connectors.Reverter); ok && rv.Revertible(t.def.SourceName) {
		info.Revertible = true
	}
	switch t.approval(args) {
	case whyConfig:
		info.ApprovalReason = fmt.Sprintf("the configuration's approve list for %s matches %s", connector, method)
	case whyConnectorArg:
		info.ApprovalReason = fmt.Sprintf("%s requires approval for this call of %s", connector, method)
	case whyConnector:
		verb, _, _ := strings.Cut(t.def.Route, " ")
		switch d := t.def.Annotations.Destructive; {
		case verb != "":
			// An HTTP operation: the verdict is ours, not the API's.
			info.ApprovalReason = fmt.Sprintf("%s is an HTTP %s operation, and codemode-mcp asks before every POST, PUT, PATCH and DELETE (no_approve lifts it)", method, verb)
		case d != nil && *d:
			info.ApprovalReason = fmt.Sprintf("%s marks %s as destructive", connector, method)
		default:
			info.ApprovalReason = fmt.Sprintf("%s requires approval for %s", connector, method)
		}
	}
	return info
}

// notAsShown is the refusal of a decision about pending actions other
// than those pending now.
func notAsShown(id, verb string) error {
	return &userError{sentinel: codemode.ErrNotAsShown, msg: fmt.Sprintf(
		"execution %s was not %s: its pending actions changed since they were shown (another decision moved it on); review what is pending now", id, verb)}
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
