package runtime

import (
	"encoding/json"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
)

// canonicalJSON re-encodes a JSON value so that key order and whitespace do
// not matter (jsonref.Canonical).
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	out, _, err := jsonref.Canonical(raw)
	return out, err
}

// rawOrNull returns v, or JSON null when v is empty.
func rawOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
