package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
)

// validating wraps a tool's handler: arguments that do not fit the tool's
// input schema get a tool error (isError, as the 2025-11-25 specification
// asks of input validation, SEP-1303) listing every violation with its
// JSON pointer, and the handler does not run.
func validating(name string, schema json.RawMessage, h mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
	a := newToolArgs(name, schema)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, err := json.Marshal(req.GetRawArguments())
		if err != nil {
			b = nil
		}
		if err := a.check(b); err != nil {
			return badArguments(err), nil
		}
		return h(ctx, req)
	}
}

// toolArgs checks the arguments of one of our tools against its input
// schema.
type toolArgs struct {
	name string
	sch  *jsonschema.Schema
}

func newToolArgs(name string, schema json.RawMessage) toolArgs {
	return toolArgs{name: name, sch: compileToolSchema(name, schema)}
}

// codemodeArgs checks the codemode tool's arguments (a task-augmented call
// is checked in front of mcp-go: tasks.go).
var codemodeArgs = newToolArgs("codemode", schemaOf(&codemodeInput{}))

// check returns nil when raw (absent or null: {}) fits the schema, else an
// error listing every violation with its JSON pointer.
func (a toolArgs) check(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		err = a.sch.Validate(inst)
	}
	if err != nil {
		return fmt.Errorf("invalid arguments for %s:\n- %s", a.name, strings.Join(schemacheck.Violations(err), "\n- "))
	}
	return nil
}

// compileToolSchema compiles the schema of one of our own tools; a schema
// that does not compile is a programming error, caught by tests.
func compileToolSchema(name string, schema json.RawMessage) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		panic("server: schema of " + name + ": " + err.Error())
	}
	c := jsonschema.NewCompiler()
	loc := name + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		panic("server: schema of " + name + ": " + err.Error())
	}
	sch, err := c.Compile(loc)
	if err != nil {
		panic("server: schema of " + name + ": " + err.Error())
	}
	return sch
}
