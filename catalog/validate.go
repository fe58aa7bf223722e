package catalog

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codemode-mcp/codemode-mcp/internal/jsonref"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
)

// compile decodes the method's input schema, adds the connector's shared
// schemas its local references need and it lacks (jsonref.WithShared),
// and compiles it. A schema that does not compile is logged once: the
// method is then called unvalidated (the connector decides).
func (t *Method) compile() compiledInput {
	var sch *jsonschema.Schema
	root, err := jsonref.Decode(t.Def.InputSchema)
	if err != nil {
		root, err = nil, fmt.Errorf("parse schema: %w", err)
	} else {
		root = jsonref.WithShared(root, t.Conn.shared())
		sch, err = schemacheck.Compile(root)
	}
	if err != nil {
		t.Conn.log.Warn("input schema does not compile; arguments are passed unvalidated", "connector", t.Conn.Name, "method", t.Def.Name, "err", err)
	}
	return compiledInput{root: root, schema: sch}
}

// InputSchema returns the method's compiled input schema, or nil when it
// does not compile (the method is then called unvalidated).
func (t *Method) InputSchema() *jsonschema.Schema { return t.compiled().schema }
