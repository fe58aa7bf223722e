package schemacheck

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestValidateArgs: patterns are ECMAScript (lookahead), every violation
// is listed with its pointer under a line naming the value, and references
// are never loaded.
func TestValidateArgs(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "pattern": "^(?!/etc)"},
			"mode": {"enum": ["r", "w"]},
			"tags": {"type": "array", "items": {"type": "string"}}
		},
		"required": ["path"],
		"additionalProperties": false
	}`)
	sch, err := CompileJSON(schema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want []string // substrings; nil = valid
	}{
		{"valid", `{"path":"a","mode":"r","tags":["x"]}`, nil},
		{"missing", `{}`, []string{"at (root):", "path"}},
		{"lookahead pattern", `{"path":"/etc/passwd"}`, []string{"at /path:"}},
		{"several", `{"path":1,"mode":"x","tags":[1],"extra":true}`, []string{"at /path:", "at /mode:", "at /tags/0:", "extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(sch, "arguments for files.open", inst)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid args refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid args accepted")
			}
			if !strings.HasPrefix(err.Error(), "invalid arguments for files.open:") {
				t.Errorf("message %q does not name the method", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := CompileJSON(json.RawMessage(`{"$ref":"file:///etc/passwd"}`)); err == nil {
		t.Error("a schema referencing a local file compiled; references must not be loaded")
	}
}
