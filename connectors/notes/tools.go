package notes

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Tool names (Name and SourceName are the same for a native connector).
const (
	ToolList   = "listNotes"
	ToolCreate = "createNote"
	ToolDelete = "deleteNote"
)

// noteSchema describes one note as the tools return it.
const noteSchema = `{
	"type": "object",
	"description": "A note.",
	"properties": {
		"id": {"type": "string", "description": "The note's id (note_ followed by hex digits)."},
		"text": {"type": "string", "description": "The note's text."},
		"tags": {"type": "array", "items": {"type": "string"}, "description": "The note's tags, in the order given."},
		"createdAt": {"type": "string", "format": "date-time", "description": "When the note was created (RFC 3339, UTC)."}
	},
	"required": ["id", "text", "tags", "createdAt"],
	"additionalProperties": false
}`

// listInput states the limits the code enforces (defaultLimit, maxLimit).
var listInput = `{
	"type": "object",
	"properties": {
		"tag": {"type": "string", "description": "Only return notes carrying this tag."},
		"limit": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(maxLimit) + `, "default": ` + strconv.Itoa(defaultLimit) + `, "description": "The most notes to return, newest first."}
	},
	"additionalProperties": false
}`

const (
	listOutput = `{
	"type": "object",
	"properties": {
		"notes": {"type": "array", "items": ` + noteSchema + `, "description": "The notes, newest first."}
	},
	"required": ["notes"],
	"additionalProperties": false
}`
	createInput = `{
	"type": "object",
	"properties": {
		"text": {"type": "string", "minLength": 1, "description": "The note's text."},
		"tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Tags to file the note under; duplicates are dropped."}
	},
	"required": ["text"],
	"additionalProperties": false
}`
	deleteInput = `{
	"type": "object",
	"properties": {
		"id": {"type": "string", "minLength": 1, "description": "The id of the note to delete."}
	},
	"required": ["id"],
	"additionalProperties": false
}`
	deleteOutput = `{
	"type": "object",
	"properties": {
		"deleted": {"type": "boolean", "description": "Whether a note with that id existed and was deleted."}
	},
	"required": ["deleted"],
	"additionalProperties": false
}`
)

// tools is the connector's tool list, in a stable order.
var tools = []connectors.Tool{
	{
		Name:         ToolList,
		SourceName:   ToolList,
		Title:        "List notes",
		Description:  "List notes, newest first, optionally only those with a tag.",
		InputSchema:  compact(listInput),
		OutputSchema: compact(listOutput),
		Annotations: connectors.Annotations{
			ReadOnly: ptr(true), Destructive: ptr(false), Idempotent: ptr(true), OpenWorld: ptr(false),
		},
	},
	{
		Name:         ToolCreate,
		SourceName:   ToolCreate,
		Title:        "Create a note",
		Description:  "Create a note with optional tags. Requires approval; a rollback deletes the note again.",
		InputSchema:  compact(createInput),
		OutputSchema: compact(noteSchema),
		Annotations: connectors.Annotations{
			ReadOnly: ptr(false), Destructive: ptr(false), Idempotent: ptr(false), OpenWorld: ptr(false),
		},
		RequiresApproval: true,
	},
	{
		Name:         ToolDelete,
		SourceName:   ToolDelete,
		Title:        "Delete a note",
		Description:  "Delete a note by id. Requires approval (it is destructive and cannot be rolled back); deleting a missing note reports deleted: false.",
		InputSchema:  compact(deleteInput),
		OutputSchema: compact(deleteOutput),
		Annotations: connectors.Annotations{
			ReadOnly: ptr(false), Destructive: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(false),
		},
		RequiresApproval: true,
	},
}

// compact returns the schema source without insignificant white space. The
// sources are constants, so a syntax error is a programming error (and the
// package's tests catch it).
func compact(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("notes: invalid schema: " + err.Error())
	}
	return b.Bytes()
}

func ptr[T any](v T) *T { return &v }
