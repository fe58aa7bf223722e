package truncate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codemode-mcp/codemode-mcp/internal/jsontext"

	"github.com/google/go-cmp/cmp"
)

var ten = strings.Repeat("abcdefghij", 100) // 1,000 characters

func q(s string) string { return `"` + s + `"` }

func TestFitValue(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		budget int
		want   string
	}{
		{"fits", `{"a": [1, 2]}`, 100, `{"a": [1, 2]}`},
		{"no limit", q(ten), 0, q(ten)},
		{"string keeps its head", q(ten), 60, `"abcdefghijabcdefghijabcdefghijabcde…[truncated 965 chars]"`},
		{"array keeps its head", `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`, 30, `[1,2,3,4,5,"… 15 more items"]`},
		{"one more item", `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`, 45, `[1,2,3,4,5,6,7,8,9,10,11,12,"… 8 more items"]`},
		{"whole array fits", `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`, 52, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`},
		{"largest value cut first", `{"id":7,"name":"x","body":` + q(ten) + `,"tags":["a","b"]}`, 120,
			`{"id":7,"name":"x","body":"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghija…[truncated 949 chars]","tags":["a","b"]}`},
		{"equal values cut equally", `[` + q(ten) + `,` + q(ten) + `,` + q(ten) + `]`, 200,
			`["abcdefghijabcdefghijabcdefghijabcdefghij…[truncated 960 chars]","abcdefghijabcdefghijabcdefghijabcdefghij…[truncated 960 chars]","abcdefghijabcdefghijabcdefghijabcdefghij…[truncated 960 chars]"]`},
		{"object drops trailing keys only when values cannot shrink", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`, 40,
			`{"a":1,"b":2,"c":3,"…":"7 more keys"}`},
		{"marker key avoids a clash", `{"…":1,"b":` + q(ten) + `}`, 20, `{"……":"2 more keys"}`},
		{"characters, not bytes", q(strings.Repeat("日本語", 100)), 40, `"日本語日本語日本語日本語日本語日…[truncated 284 chars]"`},
		{"long number", `123456789012345678901234567890123456789012345678901234567890`, 45, `"1234567890123456789012…[truncated 38 chars]"`},
		{"short number kept", `12345`, 1, `12345`},
		{"nested", `{"a":{"b":{"c":` + q(ten) + `}}}`, 50, `{"a":{"b":{"c":"abcdefg…[truncated 993 chars]"}}}`},
		{"tiny budget: smallest form", `[[1,2,3],[4,5,6],[7,8,9]]`, 20, `["… 3 more items"]`},
		{"escapes count", q(strings.Repeat(`\n`, 50)), 40, `"\n\n\n\n\n\n\n\n…[truncated 42 chars]"`},
		{"html escapes count", q(strings.Repeat(`<`, 50)), 40, `"\u003c\u003c…[truncated 48 chars]"`},
		{"not JSON becomes a string", `{"x"`, 100, `"{\"x\""`},
		{"empty", ``, 10, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Fit(json.RawMessage(tt.in), nil, tt.budget)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Value(%d) mismatch (-want +got):\n%s", tt.budget, diff)
			}
			if tt.budget > 0 && Size(got) > max(tt.budget, Slack) {
				t.Errorf("Size = %d, budget %d", Size(got), tt.budget)
			}
			if len(got) > 0 && !json.Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
		})
	}
}

func TestFitLogs(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("line %d", i)
		}
		return out
	}
	tests := []struct {
		name     string
		result   string
		logs     []string
		budget   int
		wantRes  string
		wantLogs []string
	}{
		{"fits", `1`, []string{"a"}, 100, `1`, []string{"a"}},
		{"head lines and a marker", ``, lines(20), 60, ``,
			[]string{"line 0", "line 1", "line 2", "… 17 more log lines truncated"}},
		{"merges the sandbox marker", ``, append(lines(10), "… 1000 more log lines truncated"), 60, ``,
			[]string{"line 0", "line 1", "… 1008 more log lines truncated"}},
		{"sandbox marker kept when nothing more is cut", `1`, []string{"a", "… 3 more log lines truncated"}, 1000, `1`,
			[]string{"a", "… 3 more log lines truncated"}},
		// The sandbox's notes and the runtime's warnings come after its
		// marker: its count is not lost when lines are cut.
		{"merges the sandbox marker before notes", ``, append(lines(10), "… 1000 more log lines truncated", "[warn] a call was still in flight"), 60, ``,
			[]string{"line 0", "line 1", "… 1009 more log lines truncated"}},
		{"long line cut", ``, []string{ten}, 50, ``, []string{"abcdefghijabcdefghijabc…[truncated 977 chars]"}},
		{"small logs kept, large result cut", q(ten), []string{"hello", "world"}, 100,
			`"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefgh…[truncated 942 chars]"`, []string{"hello", "world"}},
		{"both large: shared", q(ten), []string{ten, ten}, 300,
			`"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcde…[truncated 875 chars]"`,
			[]string{"abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh…[truncated 952 chars]", "abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh…[truncated 952 chars]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, logs := Fit(json.RawMessage(tt.result), tt.logs, tt.budget)
			if diff := cmp.Diff(tt.wantRes, string(res)); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs); diff != "" {
				t.Errorf("logs mismatch (-want +got):\n%s", diff)
			}
			if n := Size(res) + LogsSize(logs); n > tt.budget {
				t.Errorf("size %d > budget %d", n, tt.budget)
			}
		})
	}
}

// The acceptance sizes: 200,000 console lines and a 5 MB result.
func TestFitLarge(t *testing.T) {
	const budget = 24000
	logs := make([]string, 200000)
	for i := range logs {
		logs[i] = fmt.Sprintf("processing item %d of 200000", i)
	}
	items := make([]map[string]any, 50000)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i), "text": strings.Repeat("x", 60)}
	}
	big, err := json.Marshal(map[string]any{"items": items, "total": len(items)})
	if err != nil {
		t.Fatal(err)
	}
	if len(big) < 5e6 {
		t.Fatalf("test result is only %d bytes", len(big))
	}
	res, out := Fit(big, logs, budget)
	if n := Size(res) + LogsSize(out); n > budget || n < budget*9/10 {
		t.Errorf("size %d, want at most %d and not much less", n, budget)
	}
	var v struct {
		Items []json.RawMessage `json:"items"`
		Total int               `json:"total"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		t.Fatalf("result is not the same shape: %v\n%.300s", err, res)
	}
	if v.Total != 50000 || len(v.Items) < 10 {
		t.Errorf("total %d, %d items kept", v.Total, len(v.Items))
	}
	last := string(v.Items[len(v.Items)-1])
	if !strings.HasPrefix(last, `"… `) || !strings.HasSuffix(last, ` more items"`) {
		t.Errorf("last item %s, want the marker", last)
	}
	// Kept items are whole.
	var first map[string]any
	if err := json.Unmarshal(v.Items[0], &first); err != nil || first["text"] != strings.Repeat("x", 60) {
		t.Errorf("first item %s not whole", v.Items[0])
	}
	if got := out[len(out)-1]; !strings.HasSuffix(got, "more log lines truncated") || out[0] != logs[0] {
		t.Errorf("logs head %q, tail %q", out[0], got)
	}
}

// strSize agrees with encoding/json (and jsontext.AppendString, which
// encode uses) on every kind of character.
func TestStringEncodingMatchesMarshal(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " back \ slash`, "\b\f\n\r\t\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"日本語 ü é", "\u2028\u2029", "emoji 🎉", "bad \xff\xfe utf8 \xe6\x97", string([]byte{0xed, 0xa0, 0x80}),
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsontext.AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, _ := strSize(s); got != utf8.RuneCount(want) {
			want := utf8.RuneCount(want)
			t.Errorf("strSize(%q) = %d, want %d", s, got, want)
		}
	}
}

// Marker sizes are computed arithmetically; they must match the text.
func TestMarkerSizes(t *testing.T) {
	for _, v := range []value{{kind: kindArr}, {kind: kindLogs}, {kind: kindObj, ellipses: 2}} {
		for _, d := range []int{1, 2, 9, 10, 99, 100, 12345, 1 << 40} {
			want, _ := strSize(v.markerValue(d))
			if v.kind == kindObj {
				k, _ := strSize(v.markerKey())
				want += k + 1
			}
			if got := v.markerSize(d); got != want {
				t.Errorf("kind %d: markerSize(%d) = %d, want %d (%q)", v.kind, d, got, want, v.markerValue(d))
			}
		}
	}
	for _, d := range []int{0, 1, 10, 1 << 40} {
		if got, want := stringMinSize(d), len([]rune(q(stringMarker(d)))); got != want {
			t.Errorf("stringMinSize(%d) = %d, want %d", d, got, want)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in     string
		budget int
		want   string
	}{
		{"short", 100, "short"},
		{ten, 0, ten},
		{ten, 50, "abcdefghijabcdefghijabcde…[truncated 975 chars]"},
		{ten, 1, "…[truncated 1000 chars]"},
	}
	for _, tt := range tests {
		if got := String(tt.in, tt.budget); got != tt.want {
			t.Errorf("String(%.10q, %d) = %q, want %q", tt.in, tt.budget, got, tt.want)
		}
	}
}

func BenchmarkFit(b *testing.B) {
	items := make([]map[string]any, 50000)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i), "text": strings.Repeat("x", 60)}
	}
	big, _ := json.Marshal(items)
	small := json.RawMessage(`{"ok":true,"count":3,"names":["a","b","c"]}`)
	b.Run("5MB", func(b *testing.B) {
		for range b.N {
			Fit(big, nil, 24000)
		}
	})
	b.Run("small", func(b *testing.B) {
		for range b.N {
			Fit(small, []string{"a log line"}, 24000)
		}
	})
}

// Size returns the measure of a JSON value (see the package comment); a
// value that is not valid JSON measures as a JSON string of its text, and
// an empty one 0.
func Size(v json.RawMessage) int {
	if len(v) == 0 {
		return 0
	}
	f := &fitter{src: v, thr: math.MaxInt}
	r, _ := f.root(!json.Valid(v))
	return r.size
}

// LogsSize returns the measure of console lines as one JSON array of
// strings; 0 for no lines.
func LogsSize(logs []string) int {
	if len(logs) == 0 {
		return 0
	}
	return new(fitter).logs(logs).size
}
