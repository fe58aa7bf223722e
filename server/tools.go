package server

import (
	"encoding/json"

	"github.com/invopop/jsonschema"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Inputs of the tools we expose; their JSON Schemas are reflected from these
// structs so the schema and the decoder cannot drift apart.

type codemodeInput struct {
	Code string `json:"code" jsonschema:"required,minLength=1,description=The program: an async arrow function (preferred)\\, a statement list whose last expression is the result\\, a named function or export default; JavaScript or TypeScript; may be inside a markdown code fence."`
}

type pendingInput struct {
	ExecutionID string `json:"executionId,omitempty" jsonschema:"description=Only this execution's pending actions; all paused executions when omitted."`
}

type executionInput struct {
	ExecutionID string `json:"executionId" jsonschema:"required,minLength=1,description=The execution id (exec_…) from a paused outcome."`
}

type rejectInput struct {
	ExecutionID string `json:"executionId" jsonschema:"required,minLength=1,description=The execution id (exec_…) from a paused outcome."`
	Seq         int    `json:"seq,omitempty" jsonschema:"minimum=1,description=The pending action to reject; every pending action when omitted. The run ends rejected either way."`
}

type executionsInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,description=How many executions to list (default 20)\\, newest first."`
	Status string `json:"status,omitempty" jsonschema:"description=Only executions in this status."`
}

// completeSchema lists every execution status (codemode.ExecStatuses) as
// the values of status.
func (executionsInput) completeSchema(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("status"); ok {
		p.Enum = nil
		for _, st := range codemode.ExecStatuses() {
			p.Enum = append(p.Enum, st.String())
		}
	}
}

type snippetsInput struct{}

type saveSnippetInput struct {
	Name        string          `json:"name" jsonschema:"required,pattern=^[A-Za-z_][A-Za-z0-9_-]*$,description=The snippet's name for codemode.run(name\\, input)."`
	ExecutionID string          `json:"executionId" jsonschema:"required,minLength=1,description=A completed execution whose program becomes the snippet."`
	Description string          `json:"description,omitempty" jsonschema:"description=What the snippet does (found by codemode.search)."`
	InputSchema json.RawMessage `json:"inputSchema,omitempty" jsonschema:"type=object,description=Optional JSON Schema of the snippet's input."`
}

// schemaOf reflects the JSON Schema of a tool input struct, inline (no
// $defs) and without the $schema/$id keys some clients reject.
func schemaOf(v any) json.RawMessage {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	s := r.Reflect(v)
	s.Version = ""
	s.ID = ""
	if c, ok := v.(interface{ completeSchema(*jsonschema.Schema) }); ok {
		c.completeSchema(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic("server: cannot reflect tool schema: " + err.Error()) // programming error, caught by tests
	}
	return b
}
