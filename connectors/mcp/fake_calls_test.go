package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

var fakePages = map[string]string{
	"": `{"tools":[
		{"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}},"annotations":{"destructiveHint":true,"readOnlyHint":true}},
		{"name":"get_sum","description":"plain","inputSchema":{"type":["object","null"],"description":"typed structs cannot hold this"}},
		{"description":"no name"},
		{"name":"bad-annotations","annotations":{"readOnlyHint":"yes"}},
		{"name":"nullschema","inputSchema":null,"annotations":{"destructiveHint":true}}
	],"nextCursor":"p2"}`,
	"p2": `{"tools":[
		{"name":"get-sum","description":"duplicate"},
		{"name":"outs","title":"Outs","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"annotations":{"title":"ignored"}},
		{"name":"untitled","inputSchema":true,"annotations":{"title":"From annotations","destructiveHint":false}}
	]}`,
}

var fakeCalls = map[string]string{
	"get-sum":    `{"content":[{"type":"widget","text":"w"},{"type":"text","text":"t"}]}`,
	"get_sum":    `{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hi"}},{"type":"resource","resource":{"uri":"file:///b.bin","blob":"AAAA"}},{"type":"resource_link","uri":"file:///c","name":"c","description":"see c"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}`,
	"nullschema": `{}`,
	"outs":       `{"content":"x"}`,
	"untitled":   `{"isError":true,"content":[],"structuredContent":{"code":7}}`,
}

func TestLenientToolListing(t *testing.T) {
	_, url := startFake(t, fakePages, fakeCalls)
	rec := &recorder{}
	c := dial(t, Config{Name: "fake", URL: url, Logger: slog.New(rec)})
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	want := []connectors.Tool{
		{Name: "get_sum_2", SourceName: "get-sum",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`),
			Annotations: connectors.Annotations{ReadOnly: &yes, Destructive: &yes}},
		{Name: "get_sum", SourceName: "get_sum", Description: "plain",
			InputSchema: json.RawMessage(`{"type":["object","null"],"description":"typed structs cannot hold this"}`)},
		{Name: "nullschema", SourceName: "nullschema",
			InputSchema:      json.RawMessage(`{"type":"object"}`),
			Annotations:      connectors.Annotations{Destructive: &yes},
			RequiresApproval: true},
		{Name: "outs", SourceName: "outs", Title: "Outs",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)},
		{Name: "untitled", SourceName: "untitled", Title: "From annotations",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: connectors.Annotations{Destructive: &no}},
	}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantDiagnostics := []string{"tool names collide after sanitizing: get_sum <- get-sum, get_sum"}
	if diff := cmp.Diff(wantDiagnostics, c.Capabilities().Diagnostics); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if name, version := c.ServerInfo(); name != "fake" || version != "0.1" {
		t.Errorf("ServerInfo = %q, %q", name, version)
	}
	warnings := rec.find(func(r map[string]string) bool { return r["level"] == "WARN" })
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w["msg"])
	}
	wantMsgs := []string{
		"skipping a malformed tool definition",
		"skipping a malformed tool definition",
		"skipping a duplicate tool definition",
		"tool names collide after sanitizing; renamed with numeric suffixes",
	}
	if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestLenientCallResults(t *testing.T) {
	_, url := startFake(t, fakePages, fakeCalls)
	c := dial(t, Config{Name: "fake", URL: url})
	tests := []struct {
		tool    string
		want    connectors.Result
		wantErr string
	}{
		{tool: "get-sum", want: connectors.Result{Value: json.RawMessage(`[{"type":"widget","text":"w"},{"type":"text","text":"t"}]`)}},
		{tool: "get_sum", want: connectors.Result{Value: json.RawMessage(`[` +
			`{"type":"resource","text":"hi","mimeType":"text/plain","uri":"file:///a.txt"},` +
			`{"type":"resource","uri":"file:///b.bin","blob":"<4 bytes base64>"},` +
			`{"type":"resource_link","uri":"file:///c","name":"c","description":"see c"},` +
			`{"type":"audio","mimeType":"audio/wav","data":"<8 bytes base64>"}]`)}},
		{tool: "nullschema", want: connectors.Result{Value: json.RawMessage(`null`)}},
		{tool: "outs", wantErr: "content is not an array"},
		{tool: "untitled", want: connectors.Result{IsError: true, Message: `{"code":7}`}},
	}
	for _, tt := range tests {
		got, err := c.Call(context.Background(), tt.tool, nil)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Call(%s) = %+v, %v; want error containing %q", tt.tool, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Call(%s): %v", tt.tool, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Call(%s) (-want +got):\n%s", tt.tool, diff)
		}
	}
}

func TestJSONRPCErrorIsATransportError(t *testing.T) {
	calls := map[string]string{} // every call is answered "method not found"
	_, url := startFake(t, fakePages, calls)
	c := dial(t, Config{Name: "fake", URL: url})
	res, err := c.Call(context.Background(), "outs", nil)
	if err == nil {
		t.Fatalf("Call = %+v, want an error", res)
	}
	if !strings.Contains(err.Error(), "method not found") {
		t.Errorf("error %q does not carry the server's message", err)
	}
}

func TestRepeatedCursorIsAnError(t *testing.T) {
	pages := map[string]string{
		"":   `{"tools":[{"name":"a"}],"nextCursor":"c1"}`,
		"c1": `{"tools":[{"name":"b"}],"nextCursor":"c1"}`,
	}
	_, url := startFake(t, pages, nil)
	_, err := Dial(context.Background(), Config{Name: "fake", URL: url, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Fatalf("Dial = %v, want a repeated-cursor error", err)
	}
}

func TestHeadersAreSent(t *testing.T) {
	f, url := startFake(t, fakePages, fakeCalls)
	c := dial(t, Config{Name: "fake", URL: url, Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Extra": "1"}})
	if _, err := c.Call(context.Background(), "nullschema", nil); err != nil {
		t.Fatal(err)
	}
	seen := f.seenHeaders()
	if len(seen) < 3 {
		t.Fatalf("the fake saw %d requests, want at least 3", len(seen))
	}
	for i, h := range seen {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Extra") != "1" {
			t.Errorf("request %d headers = %v, want Authorization and X-Extra", i, h)
		}
	}
}

func TestHeadersReachTheFixture(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "sse"}[sse]
		t.Run(name, func(t *testing.T) {
			url := requireHeader(t, fixture.StartHTTP(t, sse), "Authorization", "Bearer tok")
			if _, err := Dial(context.Background(), Config{Name: "fx", URL: url, SSE: sse, Logger: testLogger(t)}); err == nil {
				t.Fatal("Dial without the header succeeded through the checking proxy")
			}
			c := dial(t, Config{Name: "fx", URL: url, SSE: sse, Headers: map[string]string{"Authorization": "Bearer tok"}})
			got, err := c.Call(context.Background(), "get-sum", json.RawMessage(`{"a":2,"b":3}`))
			if err != nil || string(got.Value) != "5" {
				t.Errorf("Call(get-sum) = %+v, %v; want 5", got, err)
			}
		})
	}
}

func TestInputRequiredIsAnError(t *testing.T) {
	calls := map[string]string{
		// An empty request map is mcp-go's load-shedding signal; it retries.
		"outs": `{"resultType":"input_required","inputRequests":{},"requestState":"s1"}`,
		// An elicitation the connector has no handler for.
		"untitled": `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"hi","requestedSchema":{"type":"object"}}}},"requestState":"s1"}`,
	}
	_, url := startFake(t, fakePages, calls)
	c := dial(t, Config{Name: "fake", URL: url})
	for _, tool := range []string{"outs", "untitled"} {
		if _, err := c.Call(context.Background(), tool, nil); !errors.Is(err, errInputRequired) {
			t.Errorf("Call(%s) error = %v, want errInputRequired", tool, err)
		}
	}
}
