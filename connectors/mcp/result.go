package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"
)

// errInputRequired reports a result asking the client for input
// (elicitation, sampling) that the connector cannot provide.
var errInputRequired = errors.New("the server asked for client input (elicitation or sampling), which the MCP connector does not provide")

// wireCallResult is a tools/call result as sent by the server. Fields
// other than the content are kept raw, so a malformed result yields an
// error, never a panic.
type wireCallResult struct {
	Content           []wireContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           json.RawMessage `json:"isError"`
	ResultType        json.RawMessage `json:"resultType"`
}

// wireContent is one content item; every field is optional. It is also
// how a non-text item reaches the program (see summarize): without its
// resource, and with binary data replaced by a "<N bytes base64>" marker.
type wireContent struct {
	Type        string           `json:"type"`
	Text        *string          `json:"text,omitempty"`
	MimeType    string           `json:"mimeType,omitempty"`
	URI         string           `json:"uri,omitempty"`
	Name        string           `json:"name,omitempty"`
	Description string           `json:"description,omitempty"`
	Data        *string          `json:"data,omitempty"`
	Blob        *string          `json:"blob,omitempty"`
	Resource    *wireContentBody `json:"resource,omitempty"`
}

// wireContentBody is the resource of an embedded-resource item.
type wireContentBody struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

// decodeCallResult turns a raw tools/call result into a connectors.Result:
//   - isError: true gives IsError with the text content as Message;
//   - structuredContent (not null) is the value as is;
//   - content that is all text is joined with newlines and parsed as JSON
//     when it is valid JSON, else kept as a JSON string; no content is null;
//   - other content becomes an array of items (type, text, mimeType, uri…)
//     with base64 data replaced by a "<N bytes base64>" marker, N being the
//     length of the encoded data.
//
// The commonest result, well-formed items, is decoded in one pass; when
// an item is malformed, each is decoded on its own, so that it does not
// spoil the others.
func decodeCallResult(raw json.RawMessage) (connectors.Result, error) {
	if err := countContent(raw); err != nil {
		return connectors.Result{}, err
	}
	if bytes.Contains(raw, tooDeep) {
		return connectors.Result{}, fmt.Errorf("the result is nested more than %d levels deep", maxDepth)
	}
	var w wireCallResult
	if json.Unmarshal(raw, &w) != nil {
		var loose struct {
			wireCallResult
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &loose); err != nil {
			return connectors.Result{}, fmt.Errorf("malformed tools/call result: %w", err)
		}
		w = loose.wireCallResult
		var items []json.RawMessage
		if !isNull(loose.Content) {
			if err := json.Unmarshal(loose.Content, &items); err != nil {
				return connectors.Result{}, fmt.Errorf("malformed tools/call result: content is not an array: %w", err)
			}
		}
		w.Content = make([]wireContent, len(items))
		for i, it := range items {
			if json.Unmarshal(it, &w.Content[i]) != nil {
				w.Content[i] = wireContent{Type: "invalid"}
			}
		}
	}
	if rt := bytes.TrimSpace(w.ResultType); !isNull(rt) && string(rt) != `"complete"` {
		var resultType string
		_ = json.Unmarshal(rt, &resultType) // odd: a plain result
		if resultType == "input_required" {
			return connectors.Result{}, errInputRequired
		}
	}

	if isTrue(w.IsError) {
		msg := joinText(w.Content)
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
	if len(w.Content) == 0 {
		return connectors.Result{Value: json.RawMessage("null")}, nil
	}
	if !slices.ContainsFunc(w.Content, func(c wireContent) bool { return c.Type != "text" }) {
		return connectors.Result{Value: textValue(joinText(w.Content))}, nil
	}
	for i := range w.Content {
		summarize(&w.Content[i])
	}
	v, err := jsontext.Marshal(w.Content)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("encode content items: %w", err)
	}
	return connectors.Result{Value: v}, nil
}

// maxContentItems bounds a result's content items. Decoded, an item takes
// some 40 times the 3 bytes of the smallest ({},), so a message of 64 MiB
// of them would take gigabytes; the largest real results carry a few
// hundred (pages of a document, frames of a screen).
const maxContentItems = 100_000

// countContent refuses a result with more than maxContentItems content
// items before they are decoded, counting them into nothing. A result too
// short to hold that many, the commonest, is not scanned twice.
func countContent(raw json.RawMessage) error {
	if len(raw) <= 3*maxContentItems {
		return nil
	}
	var r struct {
		Content []struct{} `json:"content"`
	}
	_ = json.Unmarshal(raw, &r) // the length holds past an item of the wrong type
	if len(r.Content) > maxContentItems {
		return fmt.Errorf("the result has more than %d content items", maxContentItems)
	}
	return nil
}

// textValue is text as JSON when it is valid JSON, else as a JSON string.
func textValue(text string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(text))
	if len(trimmed) > 0 && json.Valid(trimmed) {
		return compact(trimmed)
	}
	v, _ := jsontext.Marshal(text) // a string always encodes
	return v
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

// summarize makes c what the program sees of a non-text item: an
// embedded resource's fields in the item's place, and markers for data.
func summarize(c *wireContent) {
	if r := c.Resource; r != nil {
		c.URI = cmp.Or(c.URI, r.URI)
		c.MimeType = cmp.Or(c.MimeType, r.MimeType)
		if c.Text == nil {
			c.Text = r.Text
		}
		if c.Blob == nil {
			c.Blob = r.Blob
		}
		c.Resource = nil
	}
	c.Data, c.Blob = marker(c.Data), marker(c.Blob)
}

// marker replaces base64 data by its size.
func marker(data *string) *string {
	if data == nil {
		return nil
	}
	m := fmt.Sprintf("<%d bytes base64>", len(*data))
	return &m
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
