package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

func TestToTool(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name, raw string
		want      connectors.Tool
	}{
		{"no annotations", `{"name":"a"}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"destructive", `{"name":"a","annotations":{"destructiveHint":true}}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: connectors.Annotations{Destructive: &yes}, RequiresApproval: true}},
		{"destructive but read-only", `{"name":"a","annotations":{"destructiveHint":true,"readOnlyHint":true}}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: connectors.Annotations{Destructive: &yes, ReadOnly: &yes}}},
		{"destructive, explicitly not read-only", `{"name":"a","annotations":{"destructiveHint":true,"readOnlyHint":false}}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: connectors.Annotations{Destructive: &yes, ReadOnly: &no}, RequiresApproval: true}},
		{"read-only false alone does not gate", `{"name":"a","annotations":{"readOnlyHint":false,"idempotentHint":true,"openWorldHint":false}}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: connectors.Annotations{ReadOnly: &no, Idempotent: &yes, OpenWorld: &no}}},
		{"title from annotations", `{"name":"a","annotations":{"title":"T"}}`,
			connectors.Tool{SourceName: "a", Title: "T", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"own title wins", `{"name":"a","title":"Own","annotations":{"title":"T"}}`,
			connectors.Tool{SourceName: "a", Title: "Own", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"schemas compacted, order kept", `{"name":"a","description":"d","inputSchema":{ "type": "object", "properties": {"z": {}, "a": {}} },"outputSchema":{"type":"object"}}`,
			connectors.Tool{SourceName: "a", Description: "d",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"z":{},"a":{}}}`),
				OutputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"null schemas", `{"name":"a","inputSchema":null,"outputSchema":null}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{"non-object schemas", `{"name":"a","inputSchema":true,"outputSchema":[1]}`,
			connectors.Tool{SourceName: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w wireTool
			if err := json.Unmarshal([]byte(tt.raw), &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, w.toTool()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeToolPage(t *testing.T) {
	tests := []struct {
		raw     string
		names   []string
		next    string
		skipped int
		wantErr string
	}{
		{raw: `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"n"}`, names: []string{"a", "b"}, next: "n"},
		{raw: `{"tools":[]}`},
		{raw: `{}`},
		{raw: `{"tools":[{"name":""},{"title":"x"},5,{"name":"ok"},{"name":"bad","annotations":{"readOnlyHint":1}}]}`, names: []string{"ok"}, skipped: 4},
		{raw: `{"tools":{}}`, wantErr: "malformed tools/list result"},
		{raw: `[]`, wantErr: "malformed tools/list result"},
		{raw: `{"tools":[],"nextCursor":7}`, wantErr: "malformed tools/list result"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			tools, next, skipped, err := decodeToolPage(json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, w := range tools {
				names = append(names, w.Name)
			}
			if diff := cmp.Diff(tt.names, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if next != tt.next || len(skipped) != tt.skipped {
				t.Errorf("next = %q, skipped = %v; want %q, %d", next, skipped, tt.next, tt.skipped)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	tests := []struct {
		include, exclude []string
		name             string
		want             bool
	}{
		{nil, nil, "anything", true},
		{[]string{"get_*"}, nil, "get_sum", true},
		{[]string{"get_*"}, nil, "set_sum", false},
		{[]string{"get_*", "echo"}, nil, "echo", true},
		{nil, []string{"dangerous_*"}, "dangerous_rm", false},
		{nil, []string{"dangerous_*"}, "safe", true},
		{[]string{"*"}, []string{"*"}, "x", false},
		{[]string{"a?c"}, nil, "abc", true},
		{[]string{"a?c"}, nil, "a/c", false}, // path.Match: ? does not match '/'
		{[]string{"[a-c]*"}, nil, "beta", true},
	}
	for _, tt := range tests {
		cfg := Config{Include: tt.include, Exclude: tt.exclude}
		if got := cfg.selected(tt.name); got != tt.want {
			t.Errorf("include %v exclude %v: selected(%q) = %v, want %v", tt.include, tt.exclude, tt.name, got, tt.want)
		}
	}
}

func TestLineLogger(t *testing.T) {
	rec := &recorder{}
	l := newLineLogger(slog.New(rec), nil)
	writes := []string{"one\ntw", "o\r\n", "\n   \nthree", "", "\nfour"}
	for _, w := range writes {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	l.Flush()
	l.Flush() // nothing left
	var lines []string
	for _, r := range rec.find(func(map[string]string) bool { return true }) {
		if r["msg"] != "server stderr" || r["level"] != "DEBUG" {
			t.Errorf("record %v, want a debug \"server stderr\" record", r)
		}
		lines = append(lines, r["line"])
	}
	want := []string{"one", "two", "three", "four"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, l.Tail()); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
}

// TestLineLoggerSplitSecret checks that a long line is not split inside
// a secret, which each piece, scrubbed by itself, would leave half of.
func TestLineLoggerSplitSecret(t *testing.T) {
	const secret = "hunter2-secret"
	rec := &recorder{}
	l := newLineLogger(slog.New(rec), scrub.New(secret))
	_, _ = l.Write([]byte(strings.Repeat("x", maxLineBytes-7) + secret + " tail\n"))
	var lines []string
	for _, r := range rec.find(func(map[string]string) bool { return true }) {
		lines = append(lines, r["line"])
	}
	if want := []string{strings.Repeat("x", maxLineBytes-7), scrub.Placeholder + " tail"}; !cmp.Equal(lines, want) {
		t.Errorf("lines end %q, want %q", tails(lines), tails(want))
	}
}

// TestLineLoggerWrappedBase64: a secret in base64 that a server prints
// wrapped into lines (MIME's 76 characters, PEM's 64), which a line break
// may split, is scrubbed: such lines are logged joined, written in any
// pieces; other lines stay lines.
func TestLineLoggerWrappedBase64(t *testing.T) {
	const secret = "wrapped-secret-value-0123456789"
	enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 50) + secret + " and more text after it"))
	for _, w := range []struct {
		width int
		eol   string
	}{{76, "\r\n"}, {64, "\n"}} {
		var lines []string
		for rest := enc; rest != ""; {
			n := min(w.width, len(rest))
			lines, rest = append(lines, rest[:n]), rest[n:]
		}
		text := "dumping:\n" + strings.Join(lines, w.eol) + w.eol + "done\n"
		rec := &recorder{}
		l := newLineLogger(slog.New(rec), scrub.New(secret))
		for i := 0; i < len(text); i += 7 { // in pieces, a break at the end of some
			_, _ = l.Write([]byte(text[i:min(i+7, len(text))]))
		}
		l.Flush()
		var got []string
		for _, r := range rec.find(func(map[string]string) bool { return true }) {
			got = append(got, r["line"])
		}
		if want := []string{"dumping:", scrub.New(secret).String(enc), "done"}; !cmp.Equal(got, want) || !strings.Contains(got[1], scrub.Placeholder) {
			t.Errorf("width %d: logged %q, want %q", w.width, got, want)
		}
	}
}

// tails is the last 20 bytes of each line.
func tails(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[max(0, len(l)-20):]
	}
	return out
}

func TestLineLoggerBounds(t *testing.T) {
	rec := &recorder{}
	l := newLineLogger(slog.New(rec), nil)
	// A line longer than maxLineBytes is split; the tail keeps the last
	// tailLines lines, each shortened.
	_, _ = l.Write([]byte(strings.Repeat("x", maxLineBytes+10) + "\n"))
	lens := []int{}
	for _, r := range rec.find(func(map[string]string) bool { return true }) {
		lens = append(lens, len(r["line"]))
	}
	if diff := cmp.Diff([]int{maxLineBytes, 10}, lens); diff != "" {
		t.Errorf("split line lengths (-want +got):\n%s", diff)
	}
	for i := range 2 * tailLines {
		fmt.Fprintf(l, "line %d\n", i)
	}
	tail := l.Tail()
	if len(tail) != tailLines || tail[0] != fmt.Sprintf("line %d", tailLines) || tail[tailLines-1] != fmt.Sprintf("line %d", 2*tailLines-1) {
		t.Errorf("tail = %q", tail)
	}
}

// flatten cuts only what is nested deeper than maxDepth (within the
// object, the arrays from level 2: their last two levels), and counts no
// bracket within a string.
func TestFlatten(t *testing.T) {
	deep := strings.Repeat(`[`, maxDepth+1) + strings.Repeat(`]`, maxDepth+1)
	brackets := `"[{\\\"[{"`
	for _, tc := range []struct{ in, want string }{
		{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2}]}`},
		{`not JSON [`, `not JSON [`},
		{`{"a":` + brackets + `}`, `{"a":` + brackets + `}`},
		{`{"a":` + deep + `,"b":` + brackets + `,"c":` + deep + `}`,
			`{"a":` + deep[:maxDepth-1] + string(tooDeep) + deep[maxDepth+3:] + `,"b":` + brackets + `,"c":` + deep[:maxDepth-1] + string(tooDeep) + deep[maxDepth+3:] + `}`},
	} {
		got, cut := flatten([]byte(tc.in))
		if string(got) != tc.want || cut != (tc.in != tc.want) {
			t.Errorf("flatten(%.40s…) = %.40s…, %v; want %.40s…", tc.in, got, cut, tc.want)
		}
	}
}
