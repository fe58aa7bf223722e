package config

// Kind is what sort of tool source a connector is.
type Kind int

// Connector kinds.
const (
	KindBuiltin Kind = iota + 1 // a native Go connector compiled in
	KindStdio                   // an MCP server started as a subprocess
	KindHTTP                    // an MCP server over streamable HTTP
	KindSSE                     // an MCP server over legacy SSE
	KindOpenAPI                 // an OpenAPI (or Swagger 2.0) document
)

var kindNames = [...]string{KindBuiltin: "builtin", KindStdio: "stdio", KindHTTP: "http", KindSSE: "sse", KindOpenAPI: "openapi"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// builtins lists the native connectors a file may name with `builtin:`.
var builtins = []string{"notes"}
