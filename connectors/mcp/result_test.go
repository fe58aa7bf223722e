package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

func TestDecodeCallResult(t *testing.T) {
	big := strings.Repeat("A", 4096)
	tests := []struct {
		name, raw string
		want      connectors.Result
		wantErr   string
	}{
		{name: "json number text", raw: `{"content":[{"type":"text","text":"42"}]}`, want: value(`42`)},
		{name: "json object text, spaced", raw: `{"content":[{"type":"text","text":" {\n \"a\": [1, 2] }\n"}]}`, want: value(`{"a":[1,2]}`)},
		{name: "json literal text", raw: `{"content":[{"type":"text","text":"true"}]}`, want: value(`true`)},
		{name: "plain text", raw: `{"content":[{"type":"text","text":"hello <b>"}]}`, want: value(`"hello <b>"`)},
		{name: "text that starts like json", raw: `{"content":[{"type":"text","text":"{not json"}]}`, want: value(`"{not json"`)},
		{name: "empty text", raw: `{"content":[{"type":"text","text":""}]}`, want: value(`""`)},
		{name: "texts joined by newlines", raw: `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, want: value(`"a\nb"`)},
		{name: "two json texts are not one json", raw: `{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"}]}`, want: value(`"1\n2"`)},
		{name: "no content", raw: `{"content":[]}`, want: value(`null`)},
		{name: "content missing", raw: `{}`, want: value(`null`)},
		{name: "content null", raw: `{"content":null}`, want: value(`null`)},
		{name: "structured wins", raw: `{"content":[{"type":"text","text":"ignored"}],"structuredContent":{"b":1,"a":[true]}}`, want: value(`{"b":1,"a":[true]}`)},
		{name: "structured keeps number precision", raw: `{"structuredContent":{"n":12345678901234567890}}`, want: value(`{"n":12345678901234567890}`)},
		{name: "structured null is absent", raw: `{"content":[{"type":"text","text":"7"}],"structuredContent":null}`, want: value(`7`)},
		{name: "error with text", raw: `{"isError":true,"content":[{"type":"text","text":"boom: x"}]}`, want: connectors.Result{IsError: true, Message: "boom: x"}},
		{name: "error with json text keeps text", raw: `{"isError":true,"content":[{"type":"text","text":"{\"code\":1}"}]}`, want: connectors.Result{IsError: true, Message: `{"code":1}`}},
		{name: "error with structured only", raw: `{"isError":true,"structuredContent":{"code": 7}}`, want: connectors.Result{IsError: true, Message: `{"code":7}`}},
		{name: "error without anything", raw: `{"isError":true}`, want: connectors.Result{IsError: true, Message: "the tool reported an error without a message"}},
		{name: "error texts joined", raw: `{"isError":true,"content":[{"type":"image","data":"AA=="},{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, want: connectors.Result{IsError: true, Message: "a\nb"}},
		{name: "isError not a bool", raw: `{"isError":"yes","content":[{"type":"text","text":"ok"}]}`, want: value(`"ok"`)},
		{name: "isError false", raw: `{"isError":false,"content":[{"type":"text","text":"ok"}]}`, want: value(`"ok"`)},
		{name: "image replaced by marker", raw: `{"content":[{"type":"image","data":"` + big + `","mimeType":"image/png"}]}`,
			want: value(`[{"type":"image","mimeType":"image/png","data":"<4096 bytes base64>"}]`)},
		{name: "mixed", raw: `{"content":[{"type":"text","text":"cap"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}`,
			want: value(`[{"type":"text","text":"cap"},{"type":"audio","mimeType":"audio/wav","data":"<4 bytes base64>"}]`)},
		{name: "embedded text resource", raw: `{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"hi"}}]}`,
			want: value(`[{"type":"resource","text":"hi","mimeType":"text/plain","uri":"file:///a"}]`)},
		{name: "embedded blob resource", raw: `{"content":[{"type":"resource","resource":{"uri":"file:///b","blob":"` + big + `"}}]}`,
			want: value(`[{"type":"resource","uri":"file:///b","blob":"<4096 bytes base64>"}]`)},
		{name: "resource link", raw: `{"content":[{"type":"resource_link","uri":"file:///c","name":"c","mimeType":"text/x","description":"d"}]}`,
			want: value(`[{"type":"resource_link","mimeType":"text/x","uri":"file:///c","name":"c","description":"d"}]`)},
		{name: "unknown type", raw: `{"content":[{"type":"widget","text":"w","extra":{"x":1}}]}`, want: value(`[{"type":"widget","text":"w"}]`)},
		{name: "malformed items", raw: `{"content":[1,"a",null,{"type":7}]}`, want: value(`[{"type":"invalid"},{"type":"invalid"},{"type":""},{"type":"invalid"}]`)},
		{name: "item without type", raw: `{"content":[{"text":"t"}]}`, want: value(`[{"type":"","text":"t"}]`)},
		{name: "content not an array", raw: `{"content":{"type":"text"}}`, wantErr: "content is not an array"},
		{name: "not an object", raw: `[1,2]`, wantErr: "malformed tools/call result"},
		{name: "not json", raw: `{`, wantErr: "malformed tools/call result"},
		{name: "input required", raw: `{"resultType":"input_required","inputRequests":{}}`, wantErr: "asked for client input"},
		{name: "odd resultType", raw: `{"resultType":5,"content":[{"type":"text","text":"1"}]}`, want: value(`1`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCallResult(json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeCallResult = %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeCallResult: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func value(s string) connectors.Result { return connectors.Result{Value: json.RawMessage(s)} }

// FuzzDecodeCallResult checks that no result, however malformed, panics,
// and that a successful decode always yields valid JSON.
func FuzzDecodeCallResult(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"42"}]}`,
		`{"content":[{"type":"image","data":"AAAA"}],"isError":true}`,
		`{"structuredContent":{"a":1}}`,
		`{"content":[{"type":"resource","resource":{"blob":"x"}}]}`,
		`{"content":[null,{"resource":null}]}`,
		`{"resultType":"input_required"}`,
		`{"_meta":{"x":1},"content":[{"type":"text","text":"3"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b","data":5}]}`,
		`{"content":[{"type":"text","text":"{\"a\": 1}"}],"isError":false}`,
		`{"content":[{"type":"text"}]}`,
		`null`, `[]`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeCallResult(raw)
		if err != nil || got.IsError {
			return
		}
		if !json.Valid(got.Value) {
			t.Errorf("decodeCallResult(%q) value %q is not JSON", raw, got.Value)
		}
	})
}

// BenchmarkDecodeCallResult decodes the commonest tools/call results,
// text content, as servers on protocols before and after 2026-07-28 send
// it (the later with resultType "complete"): it is on every call's path.
func BenchmarkDecodeCallResult(b *testing.B) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"3"}]}`,
		`{"content":[{"type":"text","text":"3"}],"resultType":"complete"}`,
	} {
		b.Run(raw, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := decodeCallResult(json.RawMessage(raw)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
