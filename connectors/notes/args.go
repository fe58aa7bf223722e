package notes

import "github.com/codemode-mcp/codemode-mcp/internal/schemacheck"

// A call's arguments are checked against the tool's input schema — the
// description the model sees (tools.go) — and then decoded into the
// tool's arguments type (schemacheck.Decode): whoever calls the connector,
// a value the schema refuses gets every violation with its JSON pointer,
// and the code handles only values that fit. The schema is the one place
// that says what an argument may be.
var (
	listSchema   = schemacheck.MustCompileJSON(listInput)
	createSchema = schemacheck.MustCompileJSON(createInput)
	deleteSchema = schemacheck.MustCompileJSON(deleteInput)
)

type listArgs struct {
	Tag *string `json:"tag"`
	// Limit is a whole number in [1, maxLimit] (the schema's), 0 when
	// absent; a float64 because JSON Schema counts 1.0 as the integer 1.
	Limit float64 `json:"limit"`
}

// createArgs are createNote's arguments, which are also the value of the
// note's record.
type createArgs struct {
	Text string   `json:"text"`
	Tags []string `json:"tags"`
}

type deleteArgs struct {
	ID string `json:"id"`
}
