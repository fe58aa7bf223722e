package server

import (
	"encoding/json"

	invopop "github.com/invopop/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
)

// toolArgs are the arguments of one of our tools, decoded into an In: the
// tool's input schema is reflected from In (so the schema and the decoder
// cannot drift apart) and compiled once.
type toolArgs[In any] struct {
	schema json.RawMessage
	sch    *jsonschema.Schema
}

// newToolArgs reflects In's schema, inline (no $defs) and without the
// $schema/$id keys some clients reject, and compiles it: a schema that
// does not compile is a programming error, caught by tests.
func newToolArgs[In any]() toolArgs[In] {
	r := invopop.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	s := r.Reflect(new(In))
	s.Version, s.ID = "", ""
	schema, err := json.Marshal(s)
	if err != nil {
		panic("server: tool schema: " + err.Error())
	}
	return toolArgs[In]{schema: schema, sch: schemacheck.MustCompileJSON(string(schema))}
}

// codemodeArgs are the codemode tool's arguments (a task-augmented call
// is decoded in front of mcp-go: tasks.go).
var codemodeArgs = newToolArgs[codemodeInput]()

// decode decodes raw (absent or null: {}), the arguments of tool, into an
// In. Arguments that do not fit the schema are refused with every
// violation and its JSON pointer (a tool error, as the 2025-11-25
// specification asks of input validation, SEP-1303); then the In checks
// itself, when it can.
func (a toolArgs[In]) decode(tool string, raw json.RawMessage) (*In, error) {
	in, err := schemacheck.Decode[In](a.sch, "arguments for "+tool, raw)
	if err != nil {
		return nil, err
	}
	if c, ok := any(in).(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	return in, nil
}
