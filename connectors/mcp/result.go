package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// errInputRequired reports a result asking the client for input
// (elicitation, sampling) that the connector cannot provide.
var errInputRequired = errors.New("the server asked for client input (elicitation or sampling), which the MCP connector does not provide")

// wireCallResult is a tools/call result as sent by the server. Fields are
// decoded loosely so a malformed result yields an error, never a panic.
type wireCallResult struct {
	Content           json.RawMessage `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           json.RawMessage `json:"isError"`
	ResultType        json.RawMessage `json:"resultType"`
}

// wireContent is one content item; every field is optional.
type wireContent struct {
	Type        string           `json:"type"`
	Text        *string          `json:"text"`
	MimeType    string           `json:"mimeType"`
	URI         string           `json:"uri"`
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Data        *string          `json:"data"`
	Blob        *string          `json:"blob"`
	Resource    *wireContentBody `json:"resource"`
}

// wireContentBody is the resource of an embedded-resource item.
type wireContentBody struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

// contentItem is how a non-text content item reaches the program: binary
// data is replaced by a "<N bytes base64>" marker.
type contentItem struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	MimeType    string  `json:"mimeType,omitempty"`
	URI         string  `json:"uri,omitempty"`
	Name        string  `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	Data        string  `json:"data,omitempty"`
	Blob        string  `json:"blob,omitempty"`
}

// decodeCallResult turns a raw tools/call result into a connectors.Result:
//   - isError: true gives IsError with the text content as Message;
//   - structuredContent (not null) is the value as is;
//   - content that is all text is joined with newlines and parsed as JSON
//     when it is valid JSON, else kept as a JSON string; no content is null;
//   - other content becomes an array of items (type, text, mimeType, uri…)
//     with base64 data replaced by a "<N bytes base64>" marker, N being the
//     length of the encoded data.
func decodeCallResult(raw json.RawMessage) (connectors.Result, error) {
	if v, ok := decodePlainText(raw); ok {
		return connectors.Result{Value: v}, nil
	}
	return decodeCallResultFull(raw)
}

// plainTextResult is the commonest tools/call result, decoded in one pass:
// its content items have the same fields as wireContent, so an item the
// full path would find malformed makes this decoding fail too.
type plainTextResult struct {
	Content           []wireContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           json.RawMessage `json:"isError"`
	ResultType        json.RawMessage `json:"resultType"`
}

// decodePlainText decodes a result made of text content only (no isError,
// no structuredContent, a complete resultType or none) in one pass, giving
// what decodeCallResultFull gives for it; ok is false for anything else.
func decodePlainText(raw json.RawMessage) (json.RawMessage, bool) {
	var r plainTextResult
	if json.Unmarshal(raw, &r) != nil || len(r.Content) == 0 || isTrue(r.IsError) || !isNull(r.StructuredContent) {
		return nil, false
	}
	if !isNull(r.ResultType) && string(bytes.TrimSpace(r.ResultType)) != `"complete"` {
		return nil, false
	}
	for i := range r.Content {
		if r.Content[i].Type != "text" {
			return nil, false
		}
	}
	return textValue(joinText(r.Content)), true
}

// decodeCallResultFull is decodeCallResult for any result: each part is
// decoded on its own, so a malformed item does not spoil the others.
func decodeCallResultFull(raw json.RawMessage) (connectors.Result, error) {
	var w wireCallResult
	if err := json.Unmarshal(raw, &w); err != nil {
		return connectors.Result{}, fmt.Errorf("malformed tools/call result: %w", err)
	}
	var resultType string
	_ = json.Unmarshal(w.ResultType, &resultType) // absent or odd: a plain result
	if resultType == "input_required" {
		return connectors.Result{}, errInputRequired
	}

	var items []json.RawMessage
	if !isNull(w.Content) {
		if err := json.Unmarshal(w.Content, &items); err != nil {
			return connectors.Result{}, fmt.Errorf("malformed tools/call result: content is not an array: %w", err)
		}
	}
	content := make([]wireContent, len(items))
	allText := true
	for i, it := range items {
		if err := json.Unmarshal(it, &content[i]); err != nil {
			content[i] = wireContent{Type: "invalid"}
		}
		if content[i].Type != "text" {
			allText = false
		}
	}

	if isTrue(w.IsError) {
		msg := joinText(content)
		if msg == "" && !isNull(w.StructuredContent) {
			msg = string(compact(w.StructuredContent))
		}
		if msg == "" {
			msg = "the tool reported an error without a message"
		}
		return connectors.Result{IsError: true, Message: msg}, nil
	}

	if !isNull(w.StructuredContent) {
		return connectors.Result{Value: compact(w.StructuredContent)}, nil
	}
	if len(content) == 0 {
		return connectors.Result{Value: json.RawMessage("null")}, nil
	}
	if allText {
		return connectors.Result{Value: textValue(joinText(content))}, nil
	}
	out := make([]contentItem, len(content))
	for i := range content {
		out[i] = summarize(&content[i])
	}
	v, err := marshal(out)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("encode content items: %w", err)
	}
	return connectors.Result{Value: v}, nil
}

// textValue is text as JSON when it is valid JSON, else as a JSON string.
func textValue(text string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(text))
	if len(trimmed) > 0 && json.Valid(trimmed) {
		return compact(trimmed)
	}
	v, _ := marshal(text) // a string always encodes
	return v
}

// marshal is json.Marshal without HTML escaping ("<96 bytes base64>" stays
// readable) and without the encoder's trailing newline.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// joinText joins the text of the text items with newlines.
func joinText(content []wireContent) string {
	var parts []string
	for _, c := range content {
		if c.Type == "text" && c.Text != nil {
			parts = append(parts, *c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func summarize(c *wireContent) contentItem {
	item := contentItem{
		Type:        c.Type,
		Text:        c.Text,
		MimeType:    c.MimeType,
		URI:         c.URI,
		Name:        c.Name,
		Description: c.Description,
		Data:        marker(c.Data),
		Blob:        marker(c.Blob),
	}
	if r := c.Resource; r != nil {
		if item.URI == "" {
			item.URI = r.URI
		}
		if item.MimeType == "" {
			item.MimeType = r.MimeType
		}
		if item.Text == nil {
			item.Text = r.Text
		}
		if item.Blob == "" {
			item.Blob = marker(r.Blob)
		}
	}
	return item
}

// marker replaces base64 data by its size.
func marker(data *string) string {
	if data == nil {
		return ""
	}
	return fmt.Sprintf("<%d bytes base64>", len(*data))
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func isTrue(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "true"
}

// compact returns raw without insignificant space (raw itself if it is not
// valid JSON, which cannot happen for a decoded field).
func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
