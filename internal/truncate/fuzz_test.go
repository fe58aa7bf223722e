package truncate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzFit checks Fit's invariants on any input: the result is valid JSON,
// of the same top-level kind when the input was JSON, the measure is at
// most max(budget, Slack), it is deterministic, and input that fits comes
// back unchanged.
func FuzzFit(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,3],"b":"` + strings.Repeat("x", 300) + `"}`,
		`[` + strings.Repeat(`{"k":"vvvvvvvvvv"},`, 40) + `1]`,
		`"` + strings.Repeat("日本\\n<", 80) + `"`,
		`12345678901234567890123456789012345678901234567890e10`,
		`{"…":{"……":[[[[]]]]}}`, `null`, `{"x"`, ``, "\"\xff\xfe\"",
	} {
		f.Add([]byte(s), "line one\nline two\n… 3 more log lines truncated", uint16(60))
	}
	f.Fuzz(func(t *testing.T, raw []byte, joined string, budget16 uint16) {
		budget := int(budget16)
		var logs []string
		if joined != "" {
			logs = strings.Split(joined, "\n")
		}
		res, out := Fit(raw, logs, budget)
		res2, out2 := Fit(raw, logs, budget)
		if !bytes.Equal(res, res2) || !cmp.Equal(out, out2) {
			t.Fatalf("not deterministic: %s / %s", res, res2)
		}
		if len(raw) > 0 && !json.Valid(res) {
			t.Fatalf("invalid JSON output %q from %q", res, raw)
		}
		if len(raw) == 0 && len(res) != 0 {
			t.Fatalf("result %q from nothing", res)
		}
		if len(logs) > 0 && len(out) == 0 {
			t.Fatalf("all log lines vanished without a marker")
		}
		size := Size(res) + LogsSize(out)
		if budget > 0 && size > max(budget, Slack) {
			t.Fatalf("size %d > max(budget %d, %d)\nresult %s\nlogs %q", size, budget, Slack, res, out)
		}
		if json.Valid(raw) {
			if budget == 0 || Size(raw)+LogsSize(logs) <= budget {
				if !bytes.Equal(res, raw) || !cmp.Equal(out, logs) {
					t.Fatalf("input that fits was changed: %q -> %q", raw, res)
				}
			}
			if k, k2 := topKind(raw), topKind(res); k != k2 && (k != '0' || k2 != '"') {
				t.Fatalf("kind changed from %c to %c: %q -> %q", k, k2, raw, res)
			}
		}
	})
}

// topKind is the first non-space byte of a JSON value, digits as '0'.
func topKind(raw []byte) byte {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	if b[0] == '-' || b[0] >= '0' && b[0] <= '9' {
		return '0'
	}
	return b[0]
}
