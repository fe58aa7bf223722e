package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/visible"
)

// defaultInputSchema stands in for a missing or non-object input schema.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// wireToolPage is one tools/list result as sent by the server.
type wireToolPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// wireTool is a tool definition as sent by the server; schemas stay raw.
type wireTool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title"`
	Description  string           `json:"description"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema"`
	Annotations  *wireAnnotations `json:"annotations"`
	Execution    *wireExecution   `json:"execution"`
}

// wireExecution is a tool's execution behaviour (MCP 2025-11-25).
type wireExecution struct {
	// TaskSupport is "forbidden" (or absent), "optional" or "required".
	TaskSupport string `json:"taskSupport"`
}

// offersTasks reports whether the tool may be called as a task.
func (w *wireTool) offersTasks() bool {
	return w.Execution != nil && (w.Execution.TaskSupport == "optional" || w.Execution.TaskSupport == "required")
}

// wireAnnotations are a tool's annotations: the hints as the neutral
// form names them, and a title.
type wireAnnotations struct {
	Title string `json:"title"`
	connectors.Annotations
}

// decodeToolPage decodes a raw tools/list result. A malformed tool is
// reported in skipped and left out; a malformed page is an error.
func decodeToolPage(raw json.RawMessage) (tools []wireTool, next string, skipped []error, err error) {
	var page wireToolPage
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, "", nil, fmt.Errorf("malformed tools/list result: %w", err)
	}
	for i, rt := range page.Tools {
		var t wireTool
		if err := json.Unmarshal(rt, &t); err != nil {
			skipped = append(skipped, fmt.Errorf("tool #%d: %w", i, err))
			continue
		}
		if err := checkToolName(t.Name); err != nil {
			skipped = append(skipped, fmt.Errorf("tool #%d %w", i, err))
			continue
		}
		if bytes.Contains(rt, tooDeep) {
			skipped = append(skipped, fmt.Errorf("tool #%d %s is nested more than %d levels deep", i, short.Quote(t.Name), maxDepth))
			continue
		}
		tools = append(tools, t)
	}
	return tools, page.NextCursor, skipped, nil
}

// maxToolName bounds a tool's name, listed or called without being listed
// (Config.ForwardUnknown): the MCP specification asks for 1 to 128
// characters.
const maxToolName = 128

// checkToolName refuses a tool name the connector could not show as it
// is: empty, longer than maxToolName bytes, or with a control or format
// character (visible.HasControl), with which a name could pass for another in a
// log, the console or what a model reads.
func checkToolName(name string) error {
	switch {
	case name == "":
		return errors.New("has no name")
	case len(name) > maxToolName:
		return fmt.Errorf("has a name of %d bytes (at most %d): %s", len(name), maxToolName, short.Quote(name))
	case visible.HasControl(name):
		return fmt.Errorf("has a name with control or format characters: %s", short.Quote(name))
	}
	return nil
}

// toTool converts a wire tool to the neutral form; Name is left for
// connectors.AssignNames.
//
// RequiresApproval is set only for an explicit destructiveHint: true without
// readOnlyHint: true. The MCP specification defaults destructiveHint to true
// when absent, but gating every unannotated tool would make most servers
// unusable; config globs cover tools that say nothing.
func (w *wireTool) toTool() connectors.Tool {
	t := connectors.Tool{
		SourceName:   w.Name,
		Title:        w.Title,
		Description:  w.Description,
		InputSchema:  schemaObject(w.InputSchema),
		OutputSchema: schemaObject(w.OutputSchema),
	}
	if t.InputSchema == nil {
		t.InputSchema = append(json.RawMessage(nil), defaultInputSchema...)
	}
	if a := w.Annotations; a != nil {
		if t.Title == "" {
			t.Title = a.Title
		}
		t.Annotations = a.Annotations
	}
	ann := t.Annotations
	t.RequiresApproval = ann.Destructive != nil && *ann.Destructive && (ann.ReadOnly == nil || !*ann.ReadOnly)
	return t
}

// schemaObject returns raw compacted when it is a JSON object, else nil.
func schemaObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil
	}
	return compact(raw)
}

// maxDepth is how deep encoding/json decodes JSON, which refuses a deeper
// message whole: every transport decodes a server's messages with it.
const maxDepth = 10_000

// tooDeep is what flatten puts in place of a value nested deeper than
// maxDepth: a string no tool or result is expected to hold (one that
// does is refused as if it were that deep).
var tooDeep = []byte(`"\u0000nested too deep"`)

// flatten returns msg with each value nested deeper than maxDepth replaced
// by tooDeep, so that the rest of the message can be decoded (the other
// tools of a page one tool of which is too deep), and whether it replaced
// any. A message that is not JSON is returned as it is.
func flatten(msg []byte) ([]byte, bool) {
	if shallow(msg) {
		return msg, false
	}
	var out []byte
	depth, from := 0, 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '"':
			if i = stringEnd(msg, i); i < 0 {
				return msg, false
			}
		case '{', '[':
			if depth++; depth <= maxDepth {
				continue
			}
			end := valueEnd(msg, i)
			if end < 0 {
				return msg, false
			}
			out = append(append(out, msg[from:i]...), tooDeep...)
			from, i, depth = end, end-1, depth-1
		case '}', ']':
			depth--
		}
	}
	if out == nil {
		return msg, false
	}
	return append(out, msg[from:]...), true
}

// shallow reports whether msg has too few brackets to nest anything
// deeper than maxDepth, as almost every message has: counted at the
// speed of bytes.Count, a small part of the cost of scanning it.
func shallow(msg []byte) bool {
	return bytes.Count(msg, []byte("{"))+bytes.Count(msg, []byte("[")) <= maxDepth
}

// stringEnd returns the index of the quote that ends the string opening
// at msg[i], or -1.
func stringEnd(msg []byte, i int) int {
	for i++; i < len(msg); i++ {
		switch msg[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// valueEnd returns the index just past the object or array opening at
// msg[i], or -1 when it does not end.
func valueEnd(msg []byte, i int) int {
	depth := 0
	for ; i < len(msg); i++ {
		switch msg[i] {
		case '"':
			if i = stringEnd(msg, i); i < 0 {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
