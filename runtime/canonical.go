package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// canonicalJSON re-encodes a JSON value so that key order and whitespace do
// not matter: objects come out with sorted keys, numbers keep their literal
// text. Empty input is the empty object (a call without arguments).
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	out, _, err := canonicalValue(raw)
	return out, err
}

// canonicalValue is canonicalJSON that also returns the decoded value (as
// decodeJSON gives it), so a caller that needs both decodes once.
func canonicalValue(raw json.RawMessage) (json.RawMessage, any, error) {
	// No arguments (the sandbox sends {} then) is common: no decoder for it.
	if string(raw) == "{}" || len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), map[string]any{}, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode JSON: %w", err)
	}
	return out, v, nil
}

// decodeJSON decodes one JSON value with numbers kept as json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode JSON: trailing data after the value")
	}
	return v, nil
}

// rawOrNull returns v, or JSON null when v is empty.
func rawOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
